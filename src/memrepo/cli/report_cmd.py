"""memrepo report: the governance logs as Markdown under governance/, with a health summary."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("report", help="write governance/*.md (conflict, duplicate, integrity, cost logs) and HEALTH.md")
    p.add_argument("--out", help="folder to write to (default: governance/ in the working tree)")
    p.add_argument("--expiring-days", type=float, default=7.0, help="list entries expiring within this many days (7)")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..verbs.report import report

    out = report(args.repo, args.out, expiring_days=args.expiring_days)

    def text(r: dict[str, Any]) -> str:
        h = r["health"]
        caps = ", ".join(f"{s} {u['used']:,}/{u['cap']:,}" for s, u in h["caps"]["verified"].items() if u["cap"])
        return "\n".join([f"wrote {len(r['files'])} files to {r['dir']}", f"caps (verified): {caps or '-'}",
                          f"pending reviews: {h['pending_reviews']}", (f"expiring within {h['expiring_days']:g} days: "
                          f"{len(h['expiring'])}"), f"open conflicts: {len(h['open_conflicts'])}"])

    emit(args.format, out, text)
    return 0
