"""memrepo gitops: the server side (install the pre-receive hook; run it)."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("gitops", help="server side: install or run the pre-receive hook that guards verified")
    ops = p.add_subparsers(dest="gitops_command", metavar="ACTION")
    ops.required = True
    i = ops.add_parser("install-hook", help="install the pre-receive hook in a (bare) server repository")
    i.add_argument("bare_repo", metavar="BARE_REPO", help="path of the server's repository")
    i.add_argument("--force", action="store_true", help="replace a pre-receive hook memrepo did not write")
    i.add_argument("--python", help="the interpreter the hook runs memrepo with (default: this one)")
    add_format(i)
    i.set_defaults(func=run_install)
    r = ops.add_parser("pre-receive", help="the hook itself: read '<old> <new> <ref>' lines on stdin (git runs this)")
    r.set_defaults(func=run_pre_receive)


def run_install(args: argparse.Namespace) -> int:
    import os

    from ..verbs.gitops import install_hook

    path = args.bare_repo if os.path.isabs(args.bare_repo) else os.path.join(args.repo, args.bare_repo)
    result = install_hook(path, force=args.force, python=args.python)
    emit(args.format, result, lambda r: f"installed {r['hook']} (runs {r['python']} -m memrepo.hooks.pre_receive)")
    return 0


def run_pre_receive(args: argparse.Namespace) -> int:
    from ..hooks.pre_receive import main

    return main()
