"""Decoding stored bytes and splitting frontmatter."""
from __future__ import annotations

from ..errors import ParseError

_CJK_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xAC00, 0xD7AF))


def is_cjk_char(ch: str) -> bool:
    cp = ord(ch)
    return 0x3040 <= cp <= 0xD7AF and any(lo <= cp <= hi for lo, hi in _CJK_RANGES)


class _CjkMatcher:
    """Chinese, Japanese kana and Korean hangul: scripts written without spaces between words.

    The regex-like ``search``/``match`` answer truthily; no regex is compiled, because a wide
    character class costs ~3 ms to compile in every process (CLI start-up matters).
    """

    @staticmethod
    def search(text: str) -> bool:
        if text.isascii() or max(text) < "\u3040":  # max: one C pass; most non-ASCII text is not CJK
            return False
        return any(ord(ch) >= 0x3040 and is_cjk_char(ch) for ch in text)

    @staticmethod
    def match(text: str) -> bool:
        return bool(text) and is_cjk_char(text[0])


CJK_RE = _CjkMatcher()


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
    text = text.removeprefix("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != "---":
        raise ParseError("missing YAML frontmatter (the file must start with a '---' line)", where=f"{where}:1",
                         hint="start the file with '---', the fields, then '---'")
    for i in range(1, len(lines)):
        if lines[i].rstrip("\r") == "---":
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:]), i + 2
    raise ParseError("frontmatter is not closed by a '---' line", where=f"{where}:1", hint="add a '---' line after the fields")
