"""memrepo audit: the governance logs (conflict, duplicate, integrity, cost) or raw audit events."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit

LOGS = ("conflict", "duplicate", "integrity", "cost")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("audit", help="list a governance log (conflict, duplicate, integrity, cost) or audit events")
    p.add_argument("--kind", help="a log: conflict | duplicate | integrity | cost; or one event kind "
                                  "(blocked_write, rejected, ...); default: every audit event")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..repo import MemRepo
    from ..verbs.audit import read_audit
    from ..verbs.report import describe, governance_log

    repo = MemRepo.open(args.repo)
    records = governance_log(repo, args.kind) if args.kind in LOGS else read_audit(repo, args.kind)
    payload = {"log": args.kind if args.kind in LOGS else None, "records": records, "count": len(records)}
    emit(args.format, payload, lambda r: "\n".join(f"{x.get('time', '')} {x.get('event', '')}: {describe(x)}"
                                                  for x in r["records"]) or "no records")
    return 0
