"""Rendering results: JSON for agents (stable field names), text for people."""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

from ..errors import MemrepoError


def safe_text(text: str) -> str:
    """Text that can always be written as UTF-8: undecodable file names (lone surrogates) as \\udcXX."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def add_format(parser: Any, choices: tuple[str, ...] = ("text", "json")) -> None:
    parser.add_argument("--format", choices=choices, default="text", help="output format (json for agents)")


def emit(fmt: str, payload: dict[str, Any], text: Callable[[dict[str, Any]], str]) -> None:
    if fmt == "json":
        sys.stdout.write(safe_text(json.dumps(payload, ensure_ascii=False, indent=2, sort_keys=False)) + "\n")
    else:
        out = text(payload)
        if out:
            sys.stdout.write(safe_text(out if out.endswith("\n") else out + "\n"))


def report_error(exc: MemrepoError, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(safe_text(json.dumps(exc.to_json(), ensure_ascii=False, indent=2, default=str)) + "\n")
    sys.stderr.write(safe_text(f"memrepo: {exc.render()}\n"))
