"""Cost: a ledger of calls, tokens and money on the audit ref, budgets from policy, and reports.

Every ``memrepo cost record`` and every write that carries ``--tokens``/``--cost`` (also kept
as Memrepo-Tokens / Memrepo-Cost trailers on the write's commit) adds one ``cost`` line to
``refs/memrepo/audit``. Budgets live in ``policies/policy.yaml`` under ``budgets:`` (per task
and per UTC day, in tokens and USD). A record or write that would cross one fails with
:class:`BudgetExceeded` and is logged, until a person raises the budget (a reviewed policy
change) or confirms the task (``memrepo cost confirm --task T --by "Name <email>"``).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

from ..errors import BudgetExceeded, MemrepoError, UsageError
from ..policy.config import POLICY_DIR, Policy
from ..repo import MemRepo
from .audit import append_audit, read_audit

COST_EVENTS = ("cost", "cost_confirm", "budget_exceeded")
SCOPES_DIR = f"{POLICY_DIR}/scopes"


@dataclass(frozen=True)
class Limits:
    tokens: int | None
    cost_usd: float | None


def _limits(raw: Any) -> Limits:
    raw = raw or {}
    tokens = raw.get("tokens")
    cost = raw.get("cost_usd")
    return Limits(int(tokens) if tokens is not None else None, float(cost) if cost is not None else None)


def task_limits(policy: Policy, task: str) -> Limits:
    budgets = policy.section("budgets")
    override = (budgets.get("tasks") or {}).get(task)
    return _limits(override if override is not None else budgets.get("per_task"))


def day_limits(policy: Policy) -> Limits:
    return _limits(policy.section("budgets").get("per_day"))


def ledger(repo: MemRepo) -> list[dict[str, Any]]:
    return [r for r in read_audit(repo) if r.get("event") in COST_EVENTS]


def _today() -> str:
    return time.strftime("%Y-%m-%d", time.gmtime())


def _spent(records: list[dict[str, Any]], *, task: str | None = None, day: str | None = None) -> tuple[int, float]:
    tokens, cost = 0, 0.0
    for r in records:
        if r.get("event") != "cost":
            continue
        if task is not None and r.get("task") != task:
            continue
        if day is not None and str(r.get("time", ""))[:10] != day:
            continue
        tokens += _count(r.get("tokens"))
        cost += _amount(r.get("cost"))
    return tokens, cost


def confirmed(records: list[dict[str, Any]], task: str | None) -> bool:
    return bool(task) and any(r.get("event") == "cost_confirm" and r.get("task") == task for r in records)


def check_budget(repo: MemRepo, policy: Policy, *, task: str | None, tokens: int, cost: float, agent: str = "",
                 tool: str = "") -> None:
    """Raise BudgetExceeded (and log it) if adding ``tokens``/``cost`` would cross a budget."""
    if tokens < 0 or cost < 0:
        raise UsageError("tokens and cost cannot be negative", where="--tokens/--cost", hint="give what was spent")
    per_task = task_limits(policy, task) if task else Limits(None, None)
    per_day = day_limits(policy)
    if per_task == Limits(None, None) and per_day == Limits(None, None):
        return
    records = ledger(repo)
    if confirmed(records, task):
        return
    crossed = []
    if task:
        t_tok, t_cost = _spent(records, task=task)
        crossed += _crossed(f"task {task}", per_task, t_tok + tokens, t_cost + cost, "budgets.per_task")
    d_tok, d_cost = _spent(records, day=_today())
    crossed += _crossed(f"day {_today()}", per_day, d_tok + tokens, d_cost + cost, "budgets.per_day")
    if not crossed:
        return
    what = "; ".join(c for c, _ in crossed)
    try:
        append_audit(repo, {"event": "budget_exceeded", "task": task or "", "agent": agent, "tool": tool,
                            "tokens": tokens, "cost": cost, "detail": what, "rules": [r for _, r in crossed]})
    except MemrepoError:
        pass
    confirm = f"`memrepo cost confirm --task {task} --by \"Name <email>\"`" if task else "a task id (--task) to confirm"
    raise BudgetExceeded(f"budget exceeded — confirm with the user ({what})", where="policies/policy.yaml:budgets",
                         hint=f"nothing was recorded or written; ask the user, then run {confirm}, "
                              "or raise the budget by a reviewed policy change",
                         data={"task": task, "crossed": [c for c, _ in crossed]})


def _crossed(label: str, limits: Limits, tokens: int, cost: float, rule: str) -> list[tuple[str, str]]:
    out = []
    if limits.tokens is not None and tokens > limits.tokens:
        out.append((f"{label} would use {tokens:,}/{limits.tokens:,} tokens", rule))
    if limits.cost_usd is not None and cost > limits.cost_usd + 1e-9:
        out.append((f"{label} would cost ${cost:.4f}/${limits.cost_usd:.2f}", rule))
    return out


def record_cost(repo_or_path: MemRepo | str, *, task: str | None, tool: str, tokens: int, cost: float | None = None,
                agent: str | None = None, calls: int = 1, subagent: bool = False, source: str = "record",
                commit: str = "", check: bool = True) -> dict[str, Any]:
    """Add one line to the cost ledger, after checking the budgets."""
    repo = MemRepo.open(repo_or_path)
    if (not task and source == "record") or not tool:  # a write's cost is booked even without a task (day budget)
        raise UsageError("task and tool are required", where="cost record", hint="give --task T --tool NAME")
    if calls < 0:
        raise UsageError("calls cannot be negative", where="--calls", hint="give the number of calls made")
    if check:
        check_budget(repo, repo.policy(), task=task, tokens=tokens, cost=cost or 0.0, agent=agent or "", tool=tool)
    rec = {"event": "cost", "task": task or "", "tool": tool, "agent": agent or "", "tokens": int(tokens),
           "cost": float(cost or 0.0), "calls": calls, "subagent": bool(subagent), "source": source,
           "commit": commit, "rules": []}
    append_audit(repo, rec)
    return rec


def confirm_task(repo_or_path: MemRepo | str, task: str, *, by: str, note: str = "") -> dict[str, Any]:
    """A person lets a task go on past its budget (recorded with their name)."""
    from .promote import parse_reviewer

    repo = MemRepo.open(repo_or_path)
    sig = parse_reviewer(by)
    rec = {"event": "cost_confirm", "task": task, "by": f"{sig.name} <{sig.email}>", "note": note, "rules": []}
    append_audit(repo, rec)
    return rec


def subagent_names(repo: MemRepo) -> set[str]:
    """Agents declared as subagents (a manifest under policies/scopes/ on verified)."""
    snap = repo.store.branch_snapshot(repo.verified_branch)
    return {p.rsplit("/", 1)[-1][:-5] for p, _, _ in snap.walk(SCOPES_DIR) if p.endswith(".yaml")}


def cost_report(repo_or_path: MemRepo | str, task: str | None = None) -> dict[str, Any]:
    """Calls, tokens and cost by task, tool and agent, with the share spent by subagents."""
    repo = MemRepo.open(repo_or_path)
    records = ledger(repo)
    subs = subagent_names(repo)
    costs = [r for r in records if r.get("event") == "cost" and (task is None or r.get("task") == task)]
    out: dict[str, Any] = {"by_task": {}, "by_tool": {}, "by_agent": {}}
    total = {"calls": 0, "tokens": 0, "cost": 0.0}
    sub = {"calls": 0, "tokens": 0, "cost": 0.0}
    for r in costs:
        is_sub = bool(r.get("subagent")) or r.get("agent") in subs
        for key, name in (("by_task", r.get("task") or "-"), ("by_tool", r.get("tool") or "-"),
                          ("by_agent", r.get("agent") or "-")):
            row = out[key].setdefault(name, {"calls": 0, "tokens": 0, "cost": 0.0})
            _add(row, r)
            if key == "by_agent":
                row["subagent"] = is_sub
        _add(total, r)
        if is_sub:
            _add(sub, r)
    policy = repo.policy()
    budgets = {}
    for name, row in out["by_task"].items():
        lim = task_limits(policy, name)
        budgets[name] = {"tokens": row["tokens"], "token_budget": lim.tokens, "cost": row["cost"],
                         "cost_budget": lim.cost_usd, "confirmed": confirmed(records, name)}
    share = (sub["tokens"] / total["tokens"]) if total["tokens"] else 0.0
    cost_share = (sub["cost"] / total["cost"]) if total["cost"] else 0.0
    out.update({"total": total, "subagents": {**sub, "token_share": round(share, 4), "cost_share": round(cost_share, 4)},
                "budgets": budgets, "day_budget": day_limits(policy).__dict__,
                "exceeded": [r for r in records if r.get("event") == "budget_exceeded"],
                "confirmations": [r for r in records if r.get("event") == "cost_confirm"]})
    return out


def _add(row: dict[str, Any], r: dict[str, Any]) -> None:
    row["calls"] += _count(r.get("calls", 1))
    row["tokens"] += _count(r.get("tokens"))
    row["cost"] = round(row["cost"] + _amount(r.get("cost")), 6)


def _amount(value: Any) -> float:
    """A ledger record's number; 0 for what is not a finite number (a hand-edited or hostile audit
    log line such as ``"tokens": Infinity`` or ``"abc"`` adds nothing instead of crashing the report)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return 0.0
    try:
        number = float(value)
    except ValueError:
        return 0.0
    return number if math.isfinite(number) else 0.0


def _count(value: Any) -> int:
    return int(_amount(value))
