"""Rendering results: JSON for agents (stable field names), text for people."""
from __future__ import annotations

import json
import sys
from typing import Any, Callable

from ..errors import MemrepoError


def add_format(parser: Any, choices: tuple[str, ...] = ("text", "json")) -> None:
    parser.add_argument("--format", choices=choices, default="text", help="output format (json for agents)")


def emit(fmt: str, payload: dict[str, Any], text: Callable[[dict[str, Any]], str]) -> None:
    if fmt == "json":
        sys.stdout.write(json.dumps(payload, ensure_ascii=False, indent=2, sort_keys=False) + "\n")
    else:
        out = text(payload)
        if out:
            sys.stdout.write(out if out.endswith("\n") else out + "\n")


def report_error(exc: MemrepoError, fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(json.dumps(exc.to_json(), ensure_ascii=False, indent=2, default=str) + "\n")
    sys.stderr.write(f"memrepo: {exc.render()}\n")
