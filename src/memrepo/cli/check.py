"""memrepo check: a tree, a change (--base), or files, judged by the target branch's policy."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format

FORMATS = ("text", "json", "github", "sarif")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("check", help="run the policy checks; exit 1 on any error finding")
    p.add_argument("rev", nargs="?", help="the ref whose tree to check (default provisional; HEAD with --base)")
    p.add_argument("--base", help="check only the change from BASE, judged by BASE's policies (the target)")
    p.add_argument("--review", choices=("record", "forge"), default="record",
                   help="with --base: who records human review: commits with Reviewed-by trailers (record, default) "
                        "or the forge's required reviews (forge: missing records are warnings)")
    p.add_argument("--files", nargs="*", metavar="FILE", help="check these working-tree files (pre-commit)")
    add_format(p, FORMATS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..verbs.check import check_change, check_files, check_ref
    from .report import render_findings

    if args.files is not None:
        result = check_files(args.repo, args.files)
    elif args.base:
        result = check_change(args.repo, args.base, args.rev or "HEAD", review=args.review)
    else:
        result = check_ref(args.repo, args.rev)
    render_findings(args.format, result.to_json(), result.findings)
    return 1 if result.blocked else 0
