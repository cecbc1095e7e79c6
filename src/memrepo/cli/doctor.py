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
        lines = []
        for lock in r["locks"]:
            if lock["removed"]:
                state = f"removed (stale: {lock['reason']})"
            elif lock["stale"]:
                state = f"stale: {lock['reason']}; run `memrepo doctor --fix` to clear it"
            else:
                state = lock["reason"]
            lines.append(f"{lock['path']} (age {lock['age_seconds']}s): {state}")
        for ref in r.get("refs", []):
            lines.append(f"{ref['ref']}: {ref['problem']}\n  hint: {ref['hint']}")
        return "\n".join(lines) if lines else "ok: no leftover locks, every ref points at a commit"

    emit(args.format, report, text)
    return 0 if report["ok"] else 1
