"""memrepo scope create / list / merge: subagents that inherit nothing and are reviewed at merge."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("scope", help="declare a subagent's readable scopes and skills; merge its branch after validation")
    verbs = p.add_subparsers(dest="scope_command", metavar="ACTION")
    verbs.required = True

    c = verbs.add_parser("create", help="write a manifest policies/scopes/NAME.yaml (reviewed like policy)")
    c.add_argument("name")
    c.add_argument("--read", default="", help="comma-separated memory scopes it may read (default: none)")
    c.add_argument("--write", default="", help="comma-separated memory scopes it may write (default: none)")
    c.add_argument("--skills", default="", help="comma-separated skill names it may load (default: none)")
    c.add_argument("--description", default="", help="the subagent's task boundary, in a sentence")
    c.add_argument("--reviewer", help='a policy owner creating it now: "Name <email>" (commits on verified); '
                                      "without it the manifest is proposed on provisional")
    add_format(c)
    c.set_defaults(func=run_create)

    ls = verbs.add_parser("list", help="subagent scopes in force (on verified)")
    add_format(ls)
    ls.set_defaults(func=run_list)

    m = verbs.add_parser("merge", help="validate a subagent branch and bring its writes onto provisional (pending review)")
    m.add_argument("name")
    add_format(m)
    m.set_defaults(func=run_merge)


def run_create(args: argparse.Namespace) -> int:
    from ..verbs.subagent import create_scope

    out = create_scope(args.repo, args.name, read=args.read, write=args.write, skills=args.skills,
                       description=args.description, reviewer=args.reviewer)
    emit(args.format, out, lambda r: f"scope {r['name']}: read={','.join(r['read']) or '-'} write={','.join(r['write']) or '-'} "
                                     f"skills={','.join(r['skills']) or '-'} on {r['branch']}"
                                     + (f"\nnext: {r['next']}" if r["next"] else ""))
    return 0


def run_list(args: argparse.Namespace) -> int:
    from ..verbs.subagent import list_scopes

    rows = list_scopes(args.repo)
    emit(args.format, {"scopes": rows}, lambda r: "\n".join(
        f"{s['name']}: read={','.join(s['read']) or '-'} write={','.join(s['write']) or '-'} "
        f"skills={','.join(s['skills']) or '-'} branch={s['branch']}" for s in r["scopes"]) or "no subagent scopes")
    return 0


def run_merge(args: argparse.Namespace) -> int:
    from ..verbs.subagent import merge_scope

    out = merge_scope(args.repo, args.name)
    emit(args.format, out, lambda r: r["message"] + (f" ({', '.join(r['ids'])})" if r["ids"] else ""))
    return 0
