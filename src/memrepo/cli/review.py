"""memrepo review: what provisional has that verified lacks."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("review", help="list pending changes (added, changed, removed) with origin, author, findings")
    p.add_argument("--branch", help="a subagent branch to review instead of provisional")
    p.add_argument("--diff", action="store_true", help="show each change as a diff")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..verbs.review import review

    items = review(args.repo, args.branch)
    payload = {"entries": [i.to_json() for i in items], "count": len(items)}

    def text(r: dict[str, Any]) -> str:
        if not r["entries"]:
            return "nothing pending"
        lines = []
        for e in r["entries"]:
            flag = " BLOCKED" if e["blocked"] else ""
            lines.append(f"{e['change']:8} {e['kind']:5} {e['id']}  [{e['scope'] or '-'}] origin={e['origin'] or '-'} "
                         f"by {e['author'] or '?'}{flag}")
            if e["text"] and e["kind"] in ("entry", "skill"):
                lines.append(f"         {e['text'][:200]}")
            if e["old_text"] and e["change"] == "changed":
                lines.append(f"    was: {e['old_text'][:200]}")
            for f in e["findings"]:
                lines.append(f"    {f['severity']} {f['rule']}: {f['message']}")
            if e["diff"] and (args.diff or (e["kind"] == "skill" and e["change"] == "changed")):  # a patched skill: its diff
                lines.append(e["diff"].rstrip("\n"))
        return "\n".join(lines)

    emit(args.format, payload, text)
    return 0
