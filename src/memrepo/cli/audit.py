"""memrepo audit: blocked writes and other integrity events, from the audit ref."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("audit", help="list the integrity log (blocked writes, rejections)")
    p.add_argument("--kind", help="only this event kind (blocked_write, rejected, ...)")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..repo import MemRepo
    from ..verbs.audit import read_audit

    records = read_audit(MemRepo.open(args.repo), args.kind)
    emit(args.format, {"records": records, "count": len(records)}, lambda r: "\n".join(
        f"{x['time']} {x['event']} origin={x.get('origin', '-')} agent={x.get('agent') or '-'} "
        f"rules={','.join(x.get('rules', []))} {x.get('excerpt', '') or ', '.join(x.get('ids', []))}"
        for x in r["records"]) or "no records")
    return 0
