"""memrepo remember / replace / forget / batch: agent writes onto provisional."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .output import add_format, emit

ORIGINS = ("verified_manual", "agent_inferred", "external_tool")


def add_provenance(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("provenance (recorded as commit trailers)")
    g.add_argument("--agent", help="agent name (default $MEMREPO_AGENT)")
    g.add_argument("--session", help="session id (default $MEMREPO_SESSION)")
    g.add_argument("--task", help="task id (default $MEMREPO_TASK)")
    g.add_argument("--tool-calls", type=int, help="tool calls spent on this")
    g.add_argument("--tokens", type=int, help="tokens spent on this")
    g.add_argument("--cost", type=float, help="cost in USD")


def add_parser(sub: Any) -> None:
    p = sub.add_parser("remember", help="add an entry to provisional")
    p.add_argument("text", help="the fact, as a declarative sentence ('-' reads stdin)")
    p.add_argument("--scope", default="memory", help="memory (default), user, knowledge, or a scope from policy")
    p.add_argument("--id", help="entry id (default: generated)")
    p.add_argument("--tags", default="", help="comma-separated tags")
    p.add_argument("--kind", default="fact", help="fact, preference, convention, procedure, event, decision, lesson, profile")
    p.add_argument("--type", dest="type_", help="domain of the entry (default: the scope)")
    p.add_argument("--ttl", default="permanent", help="permanent, or 30d, 6m, 1y ...")
    p.add_argument("--origin", default="agent_inferred", choices=ORIGINS, help="where the fact came from")
    _common(p, run_remember)

    p = sub.add_parser("replace", help="replace an entry (by id or unique substring); ver + 1")
    p.add_argument("old", help="entry id or a unique substring of it")
    p.add_argument("new", help="the new text ('-' reads stdin)")
    p.add_argument("--scope", default=None, help="limit the search to one scope")
    p.add_argument("--origin", default="agent_inferred", choices=ORIGINS)
    _common(p, run_replace)

    p = sub.add_parser("forget", help="remove an entry (by id or unique substring)")
    p.add_argument("old", help="entry id or a unique substring of it")
    p.add_argument("--scope", default=None, help="limit the search to one scope")
    p.add_argument("--origin", default="agent_inferred", choices=ORIGINS)
    _common(p, run_forget)

    p = sub.add_parser("batch", help="apply several operations in one commit, all or nothing")
    p.add_argument("file", help='JSON file (or - for stdin): a list of {"action": "add|replace|remove", ...}')
    _common(p, run_batch)


def _common(p: argparse.ArgumentParser, func: Any) -> None:
    add_provenance(p)
    add_format(p)
    p.set_defaults(func=func)


def _prov(args: argparse.Namespace) -> Any:
    from ..verbs.provenance import Provenance

    return Provenance.from_env(agent=args.agent, session=args.session, task=args.task, tool_calls=args.tool_calls,
                               tokens=args.tokens, cost=args.cost)


def _text(value: str) -> str:
    if value != "-":
        return value
    from ..model.text import decode_utf8

    return decode_utf8(sys.stdin.buffer.read(), "stdin")


def _print(args: argparse.Namespace, result: Any) -> int:
    def text(r: dict[str, Any]) -> str:
        lines = []
        for res in r["results"]:
            lines.append(f"{res['status']}: {res['id']} ({res['scope']}) {res['message']}".rstrip())
            lines += [f"  warning {w['rule']}: {w['message']}" for w in res["warnings"]]
        lines.append(f"branch {r['branch']} at {r['commit'] or '(unchanged)'}")
        lines += [f"  {s}: {u['used']:,}/{u['cap']:,} chars" for s, u in r["usage"].items() if u["cap"]]
        return "\n".join(lines)

    emit(args.format, result.to_json(), text)
    return 0


def run_remember(args: argparse.Namespace) -> int:
    from ..verbs.write import remember

    tags = [t.strip() for t in args.tags.split(",") if t.strip()]
    result = remember(args.repo, _text(args.text), scope=args.scope, id=args.id, tags=tags, kind=args.kind,
                      type=args.type_, ttl=args.ttl, origin=args.origin, prov=_prov(args))
    return _print(args, result)


def run_replace(args: argparse.Namespace) -> int:
    from ..verbs.write import replace

    return _print(args, replace(args.repo, args.old, _text(args.new), scope=args.scope, origin=args.origin,
                                prov=_prov(args)))


def run_forget(args: argparse.Namespace) -> int:
    from ..verbs.write import forget

    return _print(args, forget(args.repo, args.old, scope=args.scope, origin=args.origin, prov=_prov(args)))


def run_batch(args: argparse.Namespace) -> int:
    from ..errors import UsageError
    from ..verbs.write import Op, apply_ops

    raw = sys.stdin.read() if args.file == "-" else _read(args.file)
    try:
        items = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise UsageError(f"batch is not JSON: {exc.msg}", where=f"{args.file}:{exc.lineno}",
                         hint='give a JSON list like [{"action": "add", "text": "..."}]') from None
    except RecursionError:
        raise UsageError("batch nests too deeply to be a list of operations", where=args.file,
                         hint='give a JSON list like [{"action": "add", "text": "..."}]') from None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise UsageError("batch must be a JSON list of objects", where=args.file, hint='e.g. [{"action": "add", "text": "..."}]')
    ops = []
    allowed = set(Op.__dataclass_fields__) - {"updated", "ver"}  # set only by imports; git keeps the real time
    for n, item in enumerate(items):
        unknown = set(item) - allowed
        if unknown or item.get("action") not in ("add", "replace", "remove"):
            raise UsageError(f"operation {n}: bad fields {sorted(unknown) or item.get('action')!r}", where=f"{args.file}[{n}]",
                             hint=f"action is add|replace|remove; fields: {', '.join(sorted(allowed))}")
        ops.append(Op(**item))
    return _print(args, apply_ops(args.repo, ops, prov=_prov(args)))


def _read(path: str) -> str:
    from ..errors import UsageError

    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", where=path, hint="give a readable UTF-8 JSON file") from None
