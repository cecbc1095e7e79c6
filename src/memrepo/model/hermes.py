"""Hermes Agent memory files: ``MEMORY.md`` (agent notes) and ``USER.md`` (user profile).

Hermes Agent's memory tool writes ``ENTRY_DELIMITER.join(entries)`` with
``ENTRY_DELIMITER = "\\n§\\n"`` (a line holding only ``§``) and no trailing newline,
and reads a file back by splitting on that delimiter, stripping each piece and
dropping empty ones. It reads in text mode, so CRLF and CR arrive as LF.

:func:`parse_hermes` reads exactly that way (a leading BOM is dropped as well).
:func:`serialise_hermes` writes exactly that way, and refuses an entry Hermes
could not read back unchanged (blank, padded with whitespace, holding a CR,
starting with a BOM, or holding the delimiter where it would merge with a neighbour), so
``parse_hermes(serialise_hermes(x)) == x``, and every parsed list serialises.
"""
from __future__ import annotations

from collections.abc import Iterable

from ..errors import UsageError
from .entry import ENTRY_DELIMITER
from .text import decode_utf8

__all__ = ["ENTRY_DELIMITER", "HERMES_FILES", "hermes_entry_problem", "parse_hermes", "parse_hermes_file", "serialise_hermes"]

HERMES_FILES = {"memory": "MEMORY.md", "user": "USER.md"}


def parse_hermes(text: str) -> list[str]:
    """The entries of a MEMORY.md or USER.md text, as Hermes Agent reads them."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.removeprefix("\ufeff")
    return [piece.strip() for piece in text.split(ENTRY_DELIMITER) if piece.strip()]


def parse_hermes_file(data: bytes, where: str) -> list[str]:
    """Like :func:`parse_hermes` for file bytes; ParseError for binary or non-UTF-8 data."""
    return parse_hermes(decode_utf8(data, where))


def hermes_entry_problem(entry: object, *, last: bool = False) -> str:
    """Why Hermes Agent could not read ``entry`` back unchanged, or "" when it can.

    By default the entry must be safe at any position in a file; ``last`` allows
    what only the last entry may do: end with a newline and ``§`` (elsewhere that
    would merge with the delimiter after it, since Hermes splits leftmost first).
    """
    if not isinstance(entry, str):
        return f"an entry is a {type(entry).__name__}, not text"
    if not entry.strip():
        return "an entry is empty"
    if entry != entry.strip():
        return "an entry starts or ends with whitespace"
    if "\r" in entry:
        return "an entry holds a carriage return"
    if entry.startswith("\ufeff"):
        return "an entry starts with a byte-order mark"
    if ENTRY_DELIMITER in entry or (entry.endswith("\n§") and not last):
        return "an entry holds a line with only '§' (the entry delimiter)"
    return ""


def serialise_hermes(entries: Iterable[str]) -> str:
    """The MEMORY.md / USER.md text for ``entries``, byte for byte as Hermes Agent writes it."""
    out = list(entries)
    for i, entry in enumerate(out):
        problem = hermes_entry_problem(entry, last=i == len(out) - 1)
        if problem:
            raise UsageError(problem, where=f"entry {i + 1}",
                             hint="strip surrounding whitespace, use LF line breaks, and keep '§' off a line of its own")
    return ENTRY_DELIMITER.join(out)
