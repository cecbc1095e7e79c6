"""Team sync over a real git daemon: two clones of one remote, concurrent writers, conflicts as findings."""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest
from gitdaemon import clean_env, git, git_daemon

REVIEWER = "Lin <lin@acme.io>"


@pytest.fixture
def team(tmp_path: Path, run) -> Iterator[tuple[Path, Path, Path]]:
    """(server bare repo with the hook, clone A, clone B), both synced once."""
    from memrepo.verbs.gitops import install_hook
    from memrepo.verbs.init import init

    srv = tmp_path / "srv"
    init(srv / "mem.git", bare=True)
    install_hook(srv / "mem.git")
    with git_daemon(srv) as url:
        clones = []
        for name in ("a", "b"):
            git(tmp_path, "clone", "-q", f"{url}/mem.git", name)
            code, _, err = run("-C", tmp_path / name, "sync")
            assert code == 0, err
            clones.append(tmp_path / name)
        yield srv / "mem.git", clones[0], clones[1]


def entry_ids(repo: Path, ref: str) -> set[str]:
    r = pygit2.Repository(str(repo))
    tree = r[r.references[ref].target].peel(pygit2.Commit).tree
    out = set()
    stack = [("", tree)]
    while stack:
        prefix, t = stack.pop()
        for item in t:
            if item.type_str == "tree":
                stack.append((prefix + item.name + "/", r[item.id]))
            elif prefix.startswith("memories/") and item.name.endswith(".md") and item.name != "README.md":
                out.add(item.name[:-3])
    return out


def memrepo(repo: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "memrepo", "-C", str(repo), *args], env=clean_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


AGENT = """
import subprocess, sys, json
repo, tag = sys.argv[1], sys.argv[2]
for rnd in range(2):
    for i in range(2):
        subprocess.run([sys.executable, "-m", "memrepo", "-C", repo, "remember", f"{tag} fact {rnd}-{i}",
                        "--id", f"{tag}-{rnd}-{i}"], check=True, capture_output=True)
    p = subprocess.run([sys.executable, "-m", "memrepo", "-C", repo, "sync", "--format", "json"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(p.stdout + p.stderr)
"""


def test_two_agents_writing_at_once_lose_nothing(team, tmp_path):
    bare, a, b = team
    script = tmp_path / "agent.py"
    script.write_text(AGENT)
    procs = [subprocess.Popen([sys.executable, str(script), str(repo), tag], env=clean_env(), stderr=subprocess.PIPE,
                              text=True) for repo, tag in ((a, "alpha"), (b, "beta"))]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    for repo in (a, b):
        out = memrepo(repo, "sync").communicate(timeout=60)
    expected = {f"{tag}-{r}-{i}" for tag in ("alpha", "beta") for r in range(2) for i in range(2)}
    assert entry_ids(bare, "refs/heads/provisional") == expected
    for repo in (a, b):
        assert entry_ids(repo, "refs/heads/provisional") == expected, out
    assert entry_ids(bare, "refs/heads/verified") == set()


def test_promotion_travels_through_sync(team, run):
    bare, a, b = team
    run("-C", a, "remember", "CI runs on two cores", "--id", "ci-cores", "--format", "json", json_out=True)
    run("-C", a, "remember", "Still pending", "--id", "pending-1")
    assert run("-C", a, "promote", "ci-cores", "--reviewer", REVIEWER)[0] == 0
    code, res, err = run("-C", a, "sync", "--format", "json", json_out=True)
    assert code == 0, err
    assert res["pushed"] == ["refs/heads/verified", "refs/heads/provisional"]
    assert entry_ids(bare, "refs/heads/verified") == {"ci-cores"}
    code, res, err = run("-C", b, "sync", "--format", "json", json_out=True)
    assert code == 0, err
    assert entry_ids(b, "refs/heads/verified") == {"ci-cores"}
    _, rev, _ = run("-C", b, "review", "--format", "json", json_out=True)
    assert [e["id"] for e in rev["entries"]] == ["pending-1"]


def test_same_entry_changed_on_both_sides_is_a_conflict_not_last_writer_wins(team, run):
    bare, a, b = team
    run("-C", a, "remember", "The staging host is stage.acme.io", "--id", "staging")
    assert run("-C", a, "sync")[0] == 0
    assert run("-C", b, "sync")[0] == 0
    run("-C", a, "replace", "staging", "The staging host is stage2.acme.io")
    run("-C", b, "replace", "staging", "The staging host is stage3.acme.io")
    run("-C", b, "remember", "Unrelated note from B", "--id", "b-note")
    assert run("-C", a, "sync")[0] == 0
    remote_before = str(pygit2.Repository(str(bare)).references["refs/heads/provisional"].target)
    code, res, err = run("-C", b, "sync", "--format", "json", json_out=True)
    assert code == 1 and res["blocked"] and res["conflicts"] == ["staging"]
    finding = res["findings"][0]
    assert finding["rule"] == "sync.conflict" and "--ours staging" in finding["hint"]
    assert finding["extra"]["ours"] == "The staging host is stage3.acme.io"
    assert finding["extra"]["theirs"] == "The staging host is stage2.acme.io"
    # nothing was overwritten on either side
    assert str(pygit2.Repository(str(bare)).references["refs/heads/provisional"].target) == remote_before
    _, shown, _ = run("-C", b, "show", "staging", "--format", "json", json_out=True)
    assert shown["text"] == "The staging host is stage3.acme.io"
    # an explicit decision settles it, and B's other write travels too
    code, res, err = run("-C", b, "sync", "--ours", "staging", "--format", "json", json_out=True)
    assert code == 0, err
    assert run("-C", a, "sync")[0] == 0
    _, shown, _ = run("-C", a, "show", "staging", "--format", "json", json_out=True)
    assert shown["text"] == "The staging host is stage3.acme.io"
    assert {"staging", "b-note"} <= entry_ids(bare, "refs/heads/provisional")


def test_propose_pushes_exactly_the_chosen_entries_on_remote_verified(team, run):
    bare, a, _ = team
    for eid in ("p1", "p2", "p3"):
        run("-C", a, "remember", f"Proposal fact {eid}", "--id", eid)
    code, out, err = run("-C", a, "propose", "p1", "p3", "--format", "json", json_out=True)
    assert code == 0, err
    srv = pygit2.Repository(str(bare))
    commit = srv[srv.references[f"refs/heads/{out['branch']}"].target]
    assert commit.parents[0].id == srv.references["refs/heads/verified"].target
    assert entry_ids(bare, f"refs/heads/{out['branch']}") == {"p1", "p3"}
    code, _, err = run("-C", a, "propose", "nope")
    assert code == 1 and "not pending" in err


def test_sync_errors_are_memrepo_errors(tmp_path, run):
    from memrepo.verbs.init import init

    init(tmp_path / "solo")
    code, _, err = run("-C", tmp_path / "solo", "sync")
    assert code == 1 and "no remote named 'origin'" in err and "Traceback" not in err
    git(tmp_path / "solo", "remote", "add", "origin", "git://127.0.0.1:9/nothing.git")
    code, _, err = run("-C", tmp_path / "solo", "sync")
    assert code == 1 and "fetch from origin failed" in err and "Traceback" not in err


def test_a_push_that_lost_the_race_is_retried_from_a_fresh_fetch(team, run, monkeypatch):
    """B decides from a stale view of the remote (A pushed after B fetched): the server refuses the
    non-fast-forward push, and sync fetches again and merges instead of failing or overwriting."""
    from memrepo.verbs import sync as sync_mod

    bare, a, b = team
    run("-C", a, "remember", "A wrote this", "--id", "from-a")
    run("-C", b, "remember", "B wrote this", "--id", "from-b")
    real_fetch = sync_mod._Remote.fetch
    calls = []

    def stale_first(self):  # the first fetch happens "before" A's push lands
        calls.append(1)
        if len(calls) == 1:
            assert run("-C", a, "sync")[0] == 0
            return None
        return real_fetch(self)

    monkeypatch.setattr(sync_mod._Remote, "fetch", stale_first)
    code, res, err = run("-C", b, "sync", "--format", "json", json_out=True)
    assert code == 0, (err, res["findings"])
    assert res["attempts"] == 2, res
    assert {"from-a", "from-b"} <= entry_ids(bare, "refs/heads/provisional")
