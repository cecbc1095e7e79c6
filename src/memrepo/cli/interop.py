"""memrepo import / export: Hermes Agent memory folders and Agent OS one-line files."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .output import add_format, emit
from .write import ORIGINS, add_provenance


def add_parser(sub: Any) -> None:
    imp = sub.add_parser("import", help="import Hermes Agent memory (and skills) or an Agent OS file onto provisional")
    kinds = imp.add_subparsers(dest="kind", metavar="FORMAT")
    kinds.required = True
    p = kinds.add_parser("hermes", help="MEMORY.md / USER.md (§ entries) and skills/ of a Hermes home")
    p.add_argument("dir", help="a Hermes home (~/.hermes) or its memories/ folder")
    p.add_argument("--origin", default="agent_inferred", choices=ORIGINS,
                   help="origin of the imported entries (Hermes files do not record one)")
    p.add_argument("--no-skills", dest="skills", action="store_false", help="leave skills/ alone")
    _common(p, run_import_hermes)
    p = kinds.add_parser("agentos", help="one entry per line: [ID|kind|type|source_type|verification|ttl|tags|updated|ver|origin] content")
    p.add_argument("file", help="the file ('-' reads stdin)")
    p.add_argument("--scope", default=None, help="put every entry in this scope (default: the scope named by "
                                                  "the entry's type, else knowledge)")
    _common(p, run_import_agentos)

    exp = sub.add_parser("export", help="write Hermes Agent memory files or an Agent OS file (from verified)")
    kinds = exp.add_subparsers(dest="kind", metavar="FORMAT")
    kinds.required = True
    p = kinds.add_parser("hermes", help="DIR/memories/MEMORY.md, USER.md and DIR/skills/, as Hermes Agent loads them")
    p.add_argument("dir", help="a Hermes home (~/.hermes)")
    p.add_argument("--branch", default=None, help="verified (default) or provisional")
    p.add_argument("--no-skills", dest="skills", action="store_false", help="write memories only")
    add_format(p)
    p.set_defaults(func=run_export_hermes)
    p = kinds.add_parser("agentos", help="every entry on one line (ordered by updated, id)")
    p.add_argument("file", help="the file ('-' writes stdout)")
    p.add_argument("--branch", default=None, help="verified (default) or provisional")
    p.add_argument("--scope", action="append", default=None, help="only this scope (repeatable)")
    add_format(p)
    p.set_defaults(func=run_export_agentos)


def _common(p: argparse.ArgumentParser, func: Any) -> None:
    add_provenance(p)
    add_format(p)
    p.set_defaults(func=func)


def _prov(args: argparse.Namespace) -> Any:
    from .write import _prov as prov

    return prov(args)


def _import_text(r: dict[str, Any]) -> str:
    lines = [(f"imported {r['imported']} entries from {r['source']} onto {r['branch']} "
              f"({r['duplicates']} already present); nothing was promoted")]
    if r["commit"]:
        lines.append(f"commit {r['commit']}")
    lines += [f"skill {s.get('name')}: {s.get('status')} {s.get('message', '')}".rstrip() for s in r["skills"]]
    lines.append("review with `memrepo review`, then `memrepo promote`")
    return "\n".join(lines)


def _export_text(r: dict[str, Any]) -> str:
    counts = ", ".join(f"{k}: {v}" for k, v in r["counts"].items())
    lines = [f"exported from {r['branch']} at {r['commit']} to {r['target']} ({counts})"]
    lines += [f"  skipped {s.get('id') or s.get('path')}: {s['reason']}" for s in r["skipped"]]
    return "\n".join(lines)


def run_import_hermes(args: argparse.Namespace) -> int:
    from ..verbs.interop import import_hermes

    result = import_hermes(args.repo, args.dir, origin=args.origin, skills=args.skills, prov=_prov(args))
    emit(args.format, result.to_json(), _import_text)
    return 0


def run_import_agentos(args: argparse.Namespace) -> int:
    from ..verbs.interop import import_agentos

    result = import_agentos(args.repo, args.file, scope=args.scope, prov=_prov(args))
    emit(args.format, result.to_json(), _import_text)
    return 0


def run_export_hermes(args: argparse.Namespace) -> int:
    from ..verbs.interop import export_hermes

    result = export_hermes(args.repo, args.dir, branch=args.branch, skills=args.skills)
    emit(args.format, result.to_json(), _export_text)
    return 0


def run_export_agentos(args: argparse.Namespace) -> int:
    from ..verbs.interop import export_agentos

    result = export_agentos(args.repo, args.file, branch=args.branch, scopes=args.scope)
    if args.file == "-":  # stdout carries the file: the summary goes to stderr
        sys.stderr.write(_export_text(result.to_json()) + "\n")
    else:
        emit(args.format, result.to_json(), _export_text)
    return 0
