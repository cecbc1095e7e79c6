"""memrepo cost record / confirm / report: the cost ledger and its budgets."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("cost", help="record calls, tokens and cost; confirm a task past its budget; report")
    verbs = p.add_subparsers(dest="cost_command", metavar="ACTION")
    verbs.required = True

    r = verbs.add_parser("record", help="record a tool call's tokens and cost (fails when a budget would be crossed)")
    r.add_argument("--task", required=True, help="task id")
    r.add_argument("--tool", required=True, help="tool name (e.g. web.search, mcp:github)")
    r.add_argument("--tokens", type=int, required=True, help="tokens spent")
    r.add_argument("--cost", type=float, help="cost in USD")
    r.add_argument("--agent", help="agent name (default $MEMREPO_AGENT)")
    r.add_argument("--calls", type=int, default=1, help="number of calls (default 1)")
    r.add_argument("--subagent", action="store_true", help="spent by a subagent (declared subagents are detected)")
    add_format(r)
    r.set_defaults(func=run_record)

    c = verbs.add_parser("confirm", help="a person lets a task go on past its budget")
    c.add_argument("--task", required=True)
    c.add_argument("--by", required=True, help='the person who confirmed: "Name <email>"')
    c.add_argument("--note", default="", help="why")
    add_format(c)
    c.set_defaults(func=run_confirm)

    s = verbs.add_parser("report", help="spend by task, tool and agent, with the subagents' share")
    s.add_argument("--task", help="only this task")
    add_format(s)
    s.set_defaults(func=run_report)


def run_record(args: argparse.Namespace) -> int:
    import os

    from ..verbs.cost import record_cost

    rec = record_cost(args.repo, task=args.task, tool=args.tool, tokens=args.tokens, cost=args.cost,
                      agent=args.agent or os.environ.get("MEMREPO_AGENT"), calls=args.calls, subagent=args.subagent)
    emit(args.format, rec, lambda r: f"recorded {r['tokens']:,} tokens (${r['cost']:.4f}) for task {r['task']} ({r['tool']})")
    return 0


def run_confirm(args: argparse.Namespace) -> int:
    from ..verbs.cost import confirm_task

    rec = confirm_task(args.repo, args.task, by=args.by, note=args.note)
    emit(args.format, rec, lambda r: f"task {r['task']} confirmed past its budget by {r['by']}")
    return 0


def _table(title: str, rows: dict[str, Any]) -> list[str]:
    out = [title]
    for name, row in sorted(rows.items(), key=lambda kv: -kv[1]["tokens"]):
        sub = " (subagent)" if row.get("subagent") else ""
        out.append(f"  {name}{sub}: {row['calls']} call(s), {row['tokens']:,} tokens, ${row['cost']:.4f}")
    return out


def run_report(args: argparse.Namespace) -> int:
    from ..verbs.cost import cost_report

    rep = cost_report(args.repo, args.task)

    def text(r: dict[str, Any]) -> str:
        t, s = r["total"], r["subagents"]
        lines = [f"total: {t['calls']} call(s), {t['tokens']:,} tokens, ${t['cost']:.4f}",
                 f"subagents: {s['tokens']:,} tokens ({100 * s['token_share']:.0f}% of tokens), ${s['cost']:.4f}"]
        lines += _table("by task:", r["by_task"]) + _table("by tool:", r["by_tool"]) + _table("by agent:", r["by_agent"])
        lines += [f"budget exceeded: {e.get('detail', '')}" for e in r["exceeded"]]
        return "\n".join(lines)

    emit(args.format, rep, text)
    return 0
