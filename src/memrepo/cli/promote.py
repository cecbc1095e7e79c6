"""memrepo promote / reject: a person decides what reaches verified."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("promote", help="put pending entries on verified, recording the reviewer")
    p.add_argument("ids", nargs="+", help="entry ids or skill names from `memrepo review`")
    p.add_argument("--reviewer", required=True, help='the person who reviewed: "Name <email>"')
    p.add_argument("--at", help="the provisional commit that was reviewed (default: its tip)")
    add_format(p)
    p.set_defaults(func=run_promote)

    p = sub.add_parser("reject", help="drop pending entries from provisional, recording why")
    p.add_argument("ids", nargs="+")
    p.add_argument("--reason", required=True, help="why it was rejected")
    p.add_argument("--reviewer", help='who rejected: "Name <email>"')
    p.add_argument("--branch", help="a subagent branch instead of provisional")
    add_format(p)
    p.set_defaults(func=run_reject)


def run_promote(args: argparse.Namespace) -> int:
    from ..verbs.promote import promote

    result = promote(args.repo, args.ids, reviewer=args.reviewer, at=args.at)
    emit(args.format, result.to_json(), lambda r: f"promoted {', '.join(r['ids'])} to verified at {r['commit']} "
                                                  f"(reviewed by {r['reviewer']})")
    return 0


def run_reject(args: argparse.Namespace) -> int:
    from ..verbs.promote import reject

    result = reject(args.repo, args.ids, reason=args.reason, reviewer=args.reviewer, branch=args.branch)
    emit(args.format, result, lambda r: f"rejected {', '.join(r['ids'])} on {r['branch']}: {r['reason']}")
    return 0
