"""memrepo sync / propose: share memories through a git remote."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("sync", help="fetch, update verified and provisional from the remote, push provisional")
    p.add_argument("--remote", default="origin")
    p.add_argument("--ours", action="append", default=[], metavar="ID", help="settle a conflict on ID with our version")
    p.add_argument("--theirs", action="append", default=[], metavar="ID", help="settle a conflict on ID with the remote's")
    p.add_argument("--no-push", action="store_true", help="fetch and merge only")
    add_format(p)
    p.set_defaults(func=run_sync)

    p = sub.add_parser("propose", help="push a branch with exactly these pending entries on the remote's verified (for a PR)")
    p.add_argument("ids", nargs="+", help="entry ids or skill names from `memrepo review`")
    p.add_argument("--remote", default="origin")
    p.add_argument("--branch", help="branch name to push (default propose/<first id>)")
    add_format(p)
    p.set_defaults(func=run_propose)


def run_sync(args: argparse.Namespace) -> int:
    from ..verbs.sync import sync
    from .report import text_line

    result = sync(args.repo, remote=args.remote, ours=args.ours, theirs=args.theirs, push=not args.no_push)

    def text(r: dict[str, Any]) -> str:
        lines = [text_line(f) for f in result.findings]
        lines.append(f"verified {r['verified'] or '-'}  provisional {r['provisional'] or '-'}  "
                     f"pushed: {', '.join(r['pushed']) or 'nothing'}")
        return "\n".join(lines)

    emit(args.format, result.to_json(), text)
    return 1 if result.blocked else 0


def run_propose(args: argparse.Namespace) -> int:
    from ..verbs.sync import propose

    result = propose(args.repo, args.ids, remote=args.remote, branch=args.branch)
    emit(args.format, result, lambda r: f"pushed {r['branch']} ({r['commit'][:10]}) to {r['remote']} with "
                                        f"{', '.join(r['ids'])}: open a pull request into verified")
    return 0
