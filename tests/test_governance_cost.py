"""Cost ledger, budgets from policy, confirmation by a person, and the cost report."""
from __future__ import annotations

import pygit2

from memrepo.gitstore import Commit, format_message
from memrepo.repo import MemRepo

REVIEWER = "Lin <lin@acme.io>"


def _set_budgets(repo, text: str) -> None:
    """A reviewed policy change on verified (planted directly: the test plays the policy owner)."""
    store = MemRepo.open(repo).store
    snap = store.branch_snapshot("verified")
    policy = snap.read("policies/policy.yaml").decode()
    head, _, tail = policy.partition("budgets:")
    rest = tail.split("\n\n", 1)[1] if "\n\n" in tail else ""
    new = head + "budgets:\n" + text + "\n" + rest
    store.transact("verified", lambda s: Commit({"policies/policy.yaml": new.encode()},
                                               format_message("policy: budgets", "", [("Reviewed-by", REVIEWER)])))


def _tip(path, branch):
    repo = pygit2.Repository(str(path))
    return repo.references[f"refs/heads/{branch}"].target


def test_budget_crossed_refuses_record_and_write_until_confirmed(bare_repo, run):
    repo = bare_repo
    _set_budgets(repo, "  per_task: {tokens: 10000, cost_usd: 1.0}\n  per_day: {tokens: null, cost_usd: null}\n  tasks: {}")
    code, out, _ = run("-C", repo, "cost", "record", "--task", "t1", "--tool", "web.search", "--tokens", "6000",
                       "--cost", "0.4", "--agent", "hermes", "--format", "json", json_out=True)
    assert code == 0 and out["tokens"] == 6000
    code, out, err = run("-C", repo, "cost", "record", "--task", "t1", "--tool", "web.search", "--tokens", "5000",
                         "--format", "json", json_out=True)
    assert code == 1 and out["error"] == "budget_exceeded"
    assert "budget exceeded — confirm with the user" in err and "11,000/10,000 tokens" in err
    assert "memrepo cost confirm --task t1" in err and "Traceback" not in err
    before = _tip(repo, "provisional")
    code, out, err = run("-C", repo, "remember", "Search results favour the docs site", "--task", "t1",
                         "--tokens", "4500", "--format", "json", json_out=True)
    assert code == 1 and out["error"] == "budget_exceeded" and _tip(repo, "provisional") == before
    # another task has its own budget
    code, _, _ = run("-C", repo, "cost", "record", "--task", "t2", "--tool", "llm", "--tokens", "9000")
    assert code == 0
    # a person confirms: the task goes on
    code, _, err = run("-C", repo, "cost", "confirm", "--task", "t1", "--by", "lin")
    assert code == 2 and "Name <email>" in err
    code, _, _ = run("-C", repo, "cost", "confirm", "--task", "t1", "--by", REVIEWER)
    assert code == 0
    code, out, _ = run("-C", repo, "remember", "Search results favour the docs site", "--task", "t1",
                       "--tokens", "4500", "--cost", "0.2", "--agent", "hermes", "--format", "json", json_out=True)
    assert code == 0 and out["status"] == "added"
    code, log, _ = run("-C", repo, "audit", "--kind", "cost", "--format", "json", json_out=True)
    events = [r["event"] for r in log["records"]]
    assert events == ["cost", "budget_exceeded", "budget_exceeded", "cost", "cost_confirm", "cost"]
    assert log["records"][-1]["source"] == "write" and log["records"][-1]["commit"] == out["commit"]


def test_daily_budget(bare_repo, run):
    _set_budgets(bare_repo, "  per_task: null\n  per_day: {tokens: 1000, cost_usd: null}\n  tasks: {}")
    assert run("-C", bare_repo, "cost", "record", "--task", "a", "--tool", "x", "--tokens", "600")[0] == 0
    code, _, err = run("-C", bare_repo, "cost", "record", "--task", "b", "--tool", "x", "--tokens", "600")
    assert code == 1 and "day " in err and "1,200/1,000 tokens" in err
    # a write without a task is booked against the day too
    assert run("-C", bare_repo, "remember", "Runners have 8 GB of memory", "--tokens", "300")[0] == 0
    code, out, err = run("-C", bare_repo, "remember", "Runners have 4 cores", "--tokens", "200", "--format", "json",
                         json_out=True)
    assert code == 1 and out["error"] == "budget_exceeded" and "1,100/1,000 tokens" in err


def test_cost_report_by_task_tool_agent_with_subagent_share(bare_repo, run):
    repo = bare_repo
    assert run("-C", repo, "scope", "create", "researcher", "--read", "knowledge", "--write", "knowledge",
               "--reviewer", REVIEWER)[0] == 0
    run("-C", repo, "cost", "record", "--task", "essay", "--tool", "llm", "--tokens", "4000", "--cost", "0.04",
        "--agent", "hermes")
    run("-C", repo, "cost", "record", "--task", "essay", "--tool", "web.search", "--tokens", "6000", "--cost", "0.06",
        "--agent", "researcher")
    run("-C", repo, "cost", "record", "--task", "deploy", "--tool", "llm", "--tokens", "2000", "--agent", "helper",
        "--subagent")
    code, rep, _ = run("-C", repo, "cost", "report", "--format", "json", json_out=True)
    assert code == 0
    assert rep["total"]["tokens"] == 12000 and rep["by_task"]["essay"]["tokens"] == 10000
    assert rep["by_tool"]["llm"] == {"calls": 2, "tokens": 6000, "cost": 0.04}
    assert rep["by_agent"]["researcher"]["subagent"] is True and rep["by_agent"]["hermes"]["subagent"] is False
    assert rep["subagents"]["tokens"] == 8000 and abs(rep["subagents"]["token_share"] - 8000 / 12000) < 1e-3
    code, text, _ = run("-C", repo, "cost", "report", "--task", "essay")
    assert "subagents: 6,000 tokens (60% of tokens)" in text


def test_bad_cost_input_is_a_clear_error(bare_repo, run):
    code, _, err = run("-C", bare_repo, "cost", "record", "--task", "t", "--tool", "x", "--tokens", "-5")
    assert code in (1, 2) and "Traceback" not in err and "negative" in err


def test_hostile_ledger_numbers_add_nothing_and_crash_nothing(bare_repo, run):
    """A hand-edited audit log (Infinity, NaN, words, lists where numbers go) must not crash the
    report nor inflate a budget: such a record counts for nothing; well-formed ones still count."""
    from memrepo.verbs.audit import append_audit

    repo = bare_repo
    run("-C", repo, "cost", "record", "--task", "essay", "--tool", "llm", "--tokens", "4000", "--cost", "0.04")
    mem = MemRepo.open(repo)
    for bad in (float("inf"), float("nan"), "abc", [1, 2], {"n": 1}, True):
        append_audit(mem, {"event": "cost", "task": "essay", "tool": "llm", "tokens": bad, "cost": bad, "calls": bad})
    code, rep, err = run("-C", repo, "cost", "report", "--format", "json", json_out=True)
    assert code == 0 and "Traceback" not in err
    assert rep["total"]["tokens"] == 4000 and rep["by_task"]["essay"]["cost"] == 0.04
