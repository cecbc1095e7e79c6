"""memrepo scan: run the content scanner over files or stdin, or measure it on a labelled corpus."""
from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from .output import add_format, emit

if TYPE_CHECKING:
    from ..detect import Scanner
    from ..findings import Finding


def add_parser(sub: Any) -> None:
    p = sub.add_parser("scan", help="scan text for memory poisoning, secrets and unsafe commands; exit 1 on an error finding")
    p.add_argument("files", nargs="*", metavar="FILE", help="files to scan ('-' or none: standard input)")
    p.add_argument("--eval", dest="eval_file", metavar="FILE.jsonl",
                   help="measure detection and false-alarm rates on labelled JSON lines ({label: attack|benign, text})")
    add_format(p)
    p.set_defaults(func=run)


def scanner_for(repo_path: str) -> Scanner:
    """The scanner of the memory repository at ``repo_path`` (its verified policies), else the defaults."""
    from ..detect import default_scanner
    from ..errors import NotARepository
    from ..repo import MemRepo

    try:
        return MemRepo.open(repo_path).policy().scanner()  # type: ignore[no-any-return]
    except NotARepository:
        return default_scanner()


def run(args: argparse.Namespace) -> int:
    scanner = scanner_for(args.repo)
    if args.eval_file:
        return _run_eval(scanner, args.eval_file, args.format)
    findings: list[Finding] = []
    for name in args.files or ["-"]:
        text, path = _read(name)
        findings.extend(scanner.scan_text(text, path=path, line=1))
    blocked = any(f.blocking for f in findings)
    emit(args.format, {"findings": [f.to_json() for f in findings], "blocked": blocked}, _render_findings)
    return 1 if blocked else 0


def _read(name: str) -> tuple[str, str]:
    from ..errors import NotFound, ParseError

    if name == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        data = open(name, "rb").read()  # noqa: SIM115 - read whole file
    except FileNotFoundError:
        raise NotFound(f"no such file: {name}", where=name, hint="check the path") from None
    except OSError as exc:
        raise ParseError(f"cannot read: {exc.strerror}", where=name, hint="check the path and permissions") from None
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(f"not valid UTF-8 (byte {exc.start})", where=f"{name}:{line}", hint="scan UTF-8 text only") from None


def _render_findings(payload: dict[str, Any]) -> str:
    lines = []
    for f in payload["findings"]:
        where = f"{f['path']}:{f['line']}" if f["path"] else f"line {f['line']}"
        via = f" [via {f['normalisation']}]" if f["normalisation"] else ""
        lines.append(f"{where}: {f['severity']}: {f['rule']} ({f['category']}){via}: {f['message']}")
        if f["excerpt"]:
            lines.append(f"    {f['excerpt']}")
        if f["hint"]:
            lines.append(f"    hint: {f['hint']}")
    lines.append("blocked" if payload["blocked"] else ("no blocking findings" if lines else "clean"))
    return "\n".join(lines)


def _run_eval(scanner: Scanner, path: str, fmt: str) -> int:
    from ..detect.evaluate import evaluate
    from ..errors import ParseError

    records = []
    text, _ = _read(path)
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ParseError(f"not JSON: {exc.msg}", where=f"{path}:{n}", hint="one JSON object per line") from None
        if not isinstance(rec, dict) or rec.get("label") not in ("attack", "benign") or not isinstance(rec.get("text"), str):
            raise ParseError("each line needs label (attack|benign) and text", where=f"{path}:{n}",
                             hint='e.g. {"label": "attack", "text": "...", "category": "override"}')
        records.append(rec)
    emit(fmt, evaluate(records, scanner), _render_eval)
    return 0


def _render_eval(r: dict[str, Any]) -> str:
    lines = [f"detection rate:   {r['detection_rate']:.1%} ({r['detected']}/{r['attacks']} attacks)",
             f"false-alarm rate: {r['false_alarm_rate']:.1%} ({r['false_alarms']}/{r['benign']} benign)"]
    if r["misses_by_category"]:
        lines.append("misses by category:")
        lines += [f"  {cat}: {n}/{r['attacks_by_category'].get(cat, n)}" for cat, n in r["misses_by_category"].items()]
        lines += [f"  miss {m['id'] or '-'} [{m['category']}]: {m['text'][:100]}" for m in r["misses"]]
    if r["false_alarm_records"]:
        lines.append("false alarms:")
        lines += [f"  {m['id'] or '-'} [{m['category']}] {','.join(m['rules'])}: {m['text'][:100]}" for m in r["false_alarm_records"]]
    return "\n".join(lines)
