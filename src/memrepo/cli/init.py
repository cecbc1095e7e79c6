"""memrepo init [PATH]"""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("init", help="create a memory repository (or adopt an empty one)")
    p.add_argument("path", nargs="?", default=None, help="where (default: -C or the current directory)")
    p.add_argument("--bare", action="store_true", help="create a bare repository (for a server)")
    p.add_argument("--hooks-repo", metavar="URL", help="point .pre-commit-config.yaml at this repository of memrepo's "
                   "hooks (default: local copies of the hooks, run with the memrepo on PATH)")
    p.add_argument("--hooks-rev", metavar="REV", help="the revision of --hooks-repo to use")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    from ..verbs.init import init

    path = args.path if args.path is None or os.path.isabs(args.path) else os.path.join(args.repo, args.path)
    result = init(path or args.repo, bare=args.bare, hooks_repo=args.hooks_repo, hooks_rev=args.hooks_rev)
    emit(args.format, result.to_json(), lambda r: (
        f"{'Initialised' if r['created'] else 'Already a'} memory repository in {r['path']}\n"
        f"  branches: {r['verified']} (reviewed, rendered), {r['provisional']} (agent writes)"))
    return 0
