"""Reporters for findings: text, JSON, GitHub workflow annotations, SARIF 2.1.0."""
from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

from ..findings import Finding


def render_findings(fmt: str, payload: dict[str, Any], findings: Sequence[Finding]) -> None:
    if fmt == "json":
        out = json.dumps(payload, ensure_ascii=False, indent=2)
    elif fmt == "github":
        out = "\n".join(github_annotation(f) for f in findings)
    elif fmt == "sarif":
        from .sarif import to_sarif

        out = json.dumps(to_sarif(findings), ensure_ascii=False, indent=2)
    else:
        out = "\n".join(text_line(f) for f in findings) or "no findings"
        if payload.get("blocked"):
            out += "\nblocked: fix the error findings above"
    from .output import safe_text

    sys.stdout.write(safe_text(out) + ("\n" if out else ""))


def text_line(f: Finding) -> str:
    where = f"{f.path}:{f.line}" if f.line else (f.path or "-")
    extra = f" [{f.normalisation}]" if f.normalisation else ""
    line = f"{where}: {f.severity} {f.rule}{extra}: {f.message}"
    if f.excerpt:
        line += f"\n    > {f.excerpt}"
    if f.hint:
        line += f"\n    hint: {f.hint}"
    return line


def _escape_property(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A").replace(":", "%3A").replace(",", "%2C")


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_annotation(f: Finding) -> str:
    level = {"error": "error", "warning": "warning"}.get(f.severity, "notice")
    props = []
    if f.path:
        props.append(f"file={_escape_property(f.path)}")
    if f.line:
        props.append(f"line={f.line}")
    props.append(f"title={_escape_property(f.rule)}")
    msg = f.message + (f" — {f.hint}" if f.hint else "")
    return f"::{level} {','.join(props)}::{_escape_data(msg)}"
