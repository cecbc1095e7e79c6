"""memrepo log / show: history with provenance, and one entry."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("log", help="history of the repository or of one entry, with provenance")
    p.add_argument("id", nargs="?", help="an entry id: only commits that changed it")
    p.add_argument("--branch", help="branch (default provisional)")
    p.add_argument("-n", "--limit", type=int, default=50)
    add_format(p)
    p.set_defaults(func=run_log)

    p = sub.add_parser("show", help="one entry: fields and text")
    p.add_argument("id")
    p.add_argument("--branch", help="branch (default provisional, then verified)")
    add_format(p)
    p.set_defaults(func=run_show)


def run_log(args: argparse.Namespace) -> int:
    from ..verbs.history import log

    commits = log(args.repo, branch=args.branch, entry_id=args.id, limit=args.limit)

    def text(r: dict[str, Any]) -> str:
        lines = []
        for c in r["commits"]:
            lines.append(f"{c['commit'][:10]} {c['subject']}  ({c['author']})")
            for k, v in c["trailers"].items():
                lines.append(f"    {k}: {', '.join(v) if isinstance(v, list) else v}")
            if c.get("text") is not None:
                lines.append(f"    text: {c['text']}")
        return "\n".join(lines)

    emit(args.format, {"commits": commits}, text)
    return 0


def run_show(args: argparse.Namespace) -> int:
    from ..verbs.history import show

    entry = show(args.repo, args.id, branch=args.branch)
    emit(args.format, entry, lambda e: "\n".join(
        [f"{k}: {v}" for k, v in e.items() if k != "text"] + ["", str(e.get("text", ""))]))
    return 0
