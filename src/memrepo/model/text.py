"""Decoding stored bytes and splitting frontmatter."""
from __future__ import annotations

from ..errors import ParseError


def decode_utf8(data: bytes, where: str) -> str:
    if b"\x00" in data:
        raise ParseError("file holds NUL bytes (binary?)", where=where, hint="store only UTF-8 text here")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ParseError(f"not valid UTF-8 (byte {exc.start})", where=f"{where}:{line}",
                         hint="re-save the file as UTF-8") from None


def split_frontmatter(text: str, where: str) -> tuple[str, str, int]:
    """Return (frontmatter, body, body_first_line). The file must start with a '---' line."""
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        raise ParseError("missing YAML frontmatter (the file must start with a '---' line)", where=f"{where}:1",
                         hint="start the file with '---', the fields, then '---'")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:]), i + 2
    raise ParseError("frontmatter is not closed by a '---' line", where=f"{where}:1", hint="add a '---' line after the fields")
