"""memrepo doctor: explain leftover locks; --fix clears only locks proven stale."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("doctor", help="find ref locks left by killed processes; --fix clears stale ones")
    p.add_argument("--fix", action="store_true", help="remove locks proven stale (no live holder, older than 10 s)")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..verbs.doctor import doctor

    report = doctor(args.repo, fix=args.fix)

    def text(r: dict[str, Any]) -> str:
        if not r["locks"]:
            return "ok: no leftover locks"
        lines = []
        for lock in r["locks"]:
            if lock["removed"]:
                state = "removed (stale)"
            elif lock["holder_alive"]:
                state = "held by a running memrepo process: wait for it"
            elif lock["stale"]:
                state = "stale: left by a killed process; run `memrepo doctor --fix` to clear it"
            else:
                state = "recent: a git or memrepo process may still be writing; check again in a few seconds"
            lines.append(f"{lock['path']} (age {lock['age_seconds']}s): {state}")
        return "\n".join(lines)

    emit(args.format, report, text)
    return 0 if report["ok"] else 1
