"""memrepo render: the frozen snapshot for the system prompt (verified only)."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("render", help="print the memory snapshot for an agent's system prompt (from verified)")
    p.add_argument("--at", help="a verified commit to render (default: the tip)")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..verbs.render import render

    result = render(args.repo, args.at)
    if args.format == "json":
        emit("json", result.to_json(), str)
    else:
        sys.stdout.write(result.text())
    return 0
