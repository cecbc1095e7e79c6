"""memrepo skill create|patch|edit|write-file|remove-file|delete|view|list|index|import."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .output import add_format, emit
from .write import ORIGINS, add_provenance


def add_parser(sub: Any) -> None:
    p = sub.add_parser("skill", help="create, patch, review and share skills (skills/[category/]<name>/SKILL.md)")
    verbs = p.add_subparsers(dest="skill_command", metavar="ACTION")
    verbs.required = True

    q = verbs.add_parser("create", help="create a skill from a whole SKILL.md (frontmatter included)")
    q.add_argument("name", help="the skill name: a-z, 0-9 and single hyphens, equal to its folder")
    q.add_argument("--file", required=True, help="the SKILL.md to store ('-' reads stdin)")
    q.add_argument("--category", help="file it under skills/<category>/")
    _write(q, run_create)

    q = verbs.add_parser("patch", help="find-and-replace in SKILL.md or a supporting file (tolerates whitespace drift)")
    q.add_argument("name")
    q.add_argument("--old", required=True, help="the current text (a distinctive piece of it)")
    q.add_argument("--new", required=True, help="its replacement ('' deletes it)")
    q.add_argument("--file", dest="target", help="a supporting file, e.g. references/api.md (default SKILL.md)")
    q.add_argument("--all", action="store_true", help="replace every match instead of refusing an ambiguous one")
    _write(q, run_patch)

    q = verbs.add_parser("edit", help="replace the whole SKILL.md")
    q.add_argument("name")
    q.add_argument("--file", required=True, help="the new SKILL.md ('-' reads stdin)")
    _write(q, run_edit)

    q = verbs.add_parser("write-file", help="add or replace a supporting file (references/ templates/ scripts/ assets/)")
    q.add_argument("name")
    q.add_argument("path", help="path inside the skill, e.g. references/api.md")
    q.add_argument("--file", default="-", help="where to read the content (default stdin)")
    _write(q, run_write_file)

    q = verbs.add_parser("remove-file", help="remove a supporting file")
    q.add_argument("name")
    q.add_argument("path")
    _write(q, run_remove_file)

    q = verbs.add_parser("delete", help="delete a skill (on provisional; verified keeps it until promoted)")
    q.add_argument("name")
    _write(q, run_delete)

    q = verbs.add_parser("view", help="a skill's SKILL.md or one of its files in full")
    q.add_argument("name")
    q.add_argument("file", nargs="?", help="a supporting file (default SKILL.md)")
    q.add_argument("--branch", help="read this branch (default: verified, else provisional)")
    add_format(q)
    q.set_defaults(func=run_view)

    q = verbs.add_parser("list", help="every skill with its description")
    q.add_argument("--branch", help="list this branch only (default: verified plus what is pending)")
    add_format(q)
    q.set_defaults(func=run_list)

    q = verbs.add_parser("index", help="the skill index for a system prompt (verified only, byte-stable)")
    q.add_argument("--at", dest="rev", help="a commit of verified (default its tip)")
    add_format(q)
    q.set_defaults(func=run_index)

    q = verbs.add_parser("import", help="import skills from a folder (a Hermes ~/.hermes/skills, another repo's skills/)")
    q.add_argument("dir", help="the folder to import from")
    q.add_argument("--category", help="file every imported skill under this category")
    add_provenance(q)
    add_format(q)
    q.set_defaults(func=run_import)


def _write(p: argparse.ArgumentParser, func: Any) -> None:
    p.add_argument("--origin", default="agent_inferred", choices=ORIGINS, help="where the content came from")
    p.add_argument("--branch", help="write to this branch (default provisional)")
    add_provenance(p)
    add_format(p)
    p.set_defaults(func=func)


def _prov(args: argparse.Namespace) -> Any:
    from .write import _prov as prov

    return prov(args)


def _read(path: str) -> bytes:
    from ..errors import UsageError

    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}", where=path, hint="give a readable file, or '-' for stdin") from None


def _report(args: argparse.Namespace, result: Any) -> int:
    def text(r: dict[str, Any]) -> str:
        lines = [f"{r['action']}: {r['name']} ({r['path']}) {r['message']}".rstrip()]
        lines += [f"  {f['severity']} {f['rule']}: {f['path']}{':' + str(f['line']) if f['line'] else ''} {f['message']}"
                  for f in r["findings"]]
        lines.append(f"branch {r['branch']} at {r['commit'] or '(unchanged)'}")
        return "\n".join(lines)

    emit(args.format, result.to_json(), text)
    return 0


def _common(args: argparse.Namespace) -> dict[str, Any]:
    return {"origin": args.origin, "prov": _prov(args), "branch": args.branch}


def run_create(args: argparse.Namespace) -> int:
    from ..verbs.skills import create

    return _report(args, create(args.repo, args.name, _read(args.file), category=args.category, **_common(args)))


def run_patch(args: argparse.Namespace) -> int:
    from ..verbs.skills import patch

    return _report(args, patch(args.repo, args.name, args.old, args.new, file=args.target, replace_all=args.all,
                               **_common(args)))


def run_edit(args: argparse.Namespace) -> int:
    from ..verbs.skills import edit

    return _report(args, edit(args.repo, args.name, _read(args.file), **_common(args)))


def run_write_file(args: argparse.Namespace) -> int:
    from ..verbs.skills import write_file

    return _report(args, write_file(args.repo, args.name, args.path, _read(args.file), **_common(args)))


def run_remove_file(args: argparse.Namespace) -> int:
    from ..verbs.skills import remove_file

    return _report(args, remove_file(args.repo, args.name, args.path, **_common(args)))


def run_delete(args: argparse.Namespace) -> int:
    from ..verbs.skills import delete

    return _report(args, delete(args.repo, args.name, **_common(args)))


def run_view(args: argparse.Namespace) -> int:
    from ..verbs.skills import view

    result = view(args.repo, args.name, args.file, branch=args.branch)

    def text(r: dict[str, Any]) -> str:
        if r["encoding"] != "utf-8":
            return f"{r['path']}: binary file ({r['branch']}); use --format json for its base64 content"
        return r["content"]

    emit(args.format, result, text)
    return 0


def run_list(args: argparse.Namespace) -> int:
    from ..verbs.skills import list_skills

    rows = list_skills(args.repo, branch=args.branch)

    def text(r: dict[str, Any]) -> str:
        if not r["skills"]:
            return "no skills"
        out = []
        for s in r["skills"]:
            where = f"{s['category']}/" if s["category"] else ""
            flag = " (pending review)" if s.get("pending") else ""
            out.append(f"{where}{s['name']}{flag}: {' '.join(s['description'].split())[:160]}")
        return "\n".join(out)

    emit(args.format, {"skills": rows, "count": len(rows)}, text)
    return 0


def run_index(args: argparse.Namespace) -> int:
    from ..verbs.skills import index

    result = index(args.repo, args.rev)
    if args.format == "json":
        emit("json", result, lambda r: "")
    else:
        sys.stdout.write(result["text"])  # byte-exact: the text a prompt carries
    return 0


def run_import(args: argparse.Namespace) -> int:
    from ..verbs.skills import import_dir

    result = import_dir(args.repo, args.dir, category=args.category, prov=_prov(args))

    def text(r: dict[str, Any]) -> str:
        lines = []
        for s in r["imported"]:
            lines.append(f"{s['action']}: {s['name']} ({s['path']}) from {s['source']}")
            lines += [f"  {f['severity']} {f['rule']}: {f['path']} {f['message']}" for f in s["findings"]]
            lines += [f"  note: {n}" for n in s["notes"]]
        for s in r["failed"]:
            lines.append(f"FAILED: {s['name']} from {s['source']}: {s['message']}")
            lines += [f"  {f['severity']} {f['rule']}: {f['path']}{':' + str(f['line']) if f['line'] else ''} {f['message']}"
                      for f in s["findings"]]
        lines.append(f"branch {r['branch']} at {r['commit'] or '(unchanged)'}; "
                     f"{len(r['imported'])} imported, {len(r['failed'])} failed")
        return "\n".join(lines)

    emit(args.format, result, text)
    return 1 if result["failed"] else 0
