"""Agent OS one-line entries: ``[ID|kind|type|source_type|verification|ttl|tags|updated|ver|origin] content``.

One entry per line. ``tags`` is a comma-separated list, ``ver`` an integer.
Blank lines and lines starting with ``#`` are skipped; a line may end in CRLF.

Escaping (so any entry fits on one line and reads back unchanged): a backslash
starts an escape in the ten fields and in the content alike.

====================  ============================================
``\\\\``                a backslash
``\\n`` / ``\\r``       a line feed / a carriage return
``\\|`` ``\\]`` ``\\,``   ``|``, ``]``, ``,`` (needed in fields; ``,`` only in tags)
``\\uXXXX``             any character by its code point (4 hex digits)
====================  ============================================

The writer escapes ``|``, ``]`` and ``\\`` in fields, ``,`` in tags, and in both
fields and content every line break (``\\n``, ``\\r``, and as ``\\uXXXX`` the other
characters ``str.splitlines`` breaks on) plus whitespace at the end of the content,
which editors tend to strip. Any other character after a backslash is an error.
Exactly one space separates ``]`` from the content.

The format has no scope: the reader takes one (``scope=``); :attr:`Entry.extra`
is not carried. Everything else round-trips: ``parse_agentos_line(serialise_agentos(e))``
equals ``e``.
"""
from __future__ import annotations

from ..errors import ParseError, UsageError
from .entry import Entry, check_id

FIELDS = ("id", "kind", "type", "source_type", "verification", "ttl", "tags", "updated", "ver", "origin")
_LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")
_SIMPLE = {"\\": "\\", "n": "\n", "r": "\r", "|": "|", "]": "]", ",": ","}
_HEX = frozenset("0123456789abcdefABCDEF")
_FORMAT_HINT = "write '[ID|kind|type|source_type|verification|ttl|tags|updated|ver|origin] content', escaping '|', ']' and '\\' in fields"


# --- writing -----------------------------------------------------------------------------------


def _escape(text: str, special: str) -> str:
    out = []
    for ch in text:
        if ch == "\\" or ch in special:
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch in _LINE_BREAKS:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


def _escape_content(text: str) -> str:
    body = text.rstrip()
    tail = text[len(body):]
    return _escape(body, "") + _escape(tail, "").translate({ord(c): f"\\u{ord(c):04x}" for c in set(tail) if c.isspace()})


def _tags_field(tags: tuple[str, ...]) -> str:
    if any(tag == "" for tag in tags):
        raise UsageError("an empty tag cannot be written in the Agent OS format", where="tags", hint="drop the empty tag")
    return ",".join(_escape(tag, "|],") for tag in tags)


def serialise_agentos(entry: Entry) -> str:
    """One Agent OS line (no line break) for ``entry``; UsageError for an unsafe id or an empty tag."""
    check_id(entry.id)
    values = [entry.id, entry.kind, entry.type, entry.source_type, entry.verification, entry.ttl, None,
              entry.updated, str(int(entry.ver)), entry.origin]
    fields = [_tags_field(tuple(entry.tags)) if v is None else _escape(v, "|]") for v in values]
    head = "[" + "|".join(fields) + "]"
    return f"{head} {_escape_content(entry.text)}" if entry.text else head


def serialise_agentos_file(entries: list[Entry]) -> str:
    """Every entry on its own line, each line ending in LF."""
    return "".join(serialise_agentos(e) + "\n" for e in entries)


# --- reading -----------------------------------------------------------------------------------


def _unescape_at(line: str, i: int, where: str) -> tuple[str, int]:
    """The character escaped at ``line[i] == '\\\\'`` and the index after the escape."""
    nxt = line[i + 1:i + 2]
    if nxt in _SIMPLE and nxt:
        return _SIMPLE[nxt], i + 2
    digits = line[i + 2:i + 6]
    if nxt == "u" and len(digits) == 4 and set(digits) <= _HEX:
        return chr(int(digits, 16)), i + 6
    raise ParseError(f"unknown escape {line[i:i + 2]!r} at column {i + 1}", where=where,
                     hint="escapes are \\\\, \\n, \\r, \\|, \\], \\, and \\uXXXX")


def _split_head(line: str, where: str) -> tuple[list[list[str]], int]:
    """The raw fields (each a list of parts split on unescaped commas) and the index after ']'."""
    if not line.startswith("["):
        raise ParseError("an Agent OS line starts with '['", where=where, hint=_FORMAT_HINT)
    fields: list[list[str]] = [[""]]
    i = 1
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            text, i = _unescape_at(line, i, where)
            fields[-1][-1] += text
            continue
        if ch == "]":
            return fields, i + 1
        if ch == "|":
            fields.append([""])
        elif ch == ",":
            fields[-1].append("")
        else:
            fields[-1][-1] += ch
        i += 1
    raise ParseError("the field list is not closed by ']'", where=where, hint=_FORMAT_HINT)


def _unescape(text: str, where: str) -> str:
    out, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            ch, i = _unescape_at(text, i, where)
            out.append(ch)
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def parse_agentos_line(line: str, where: str, *, scope: str = "memory") -> Entry:
    """Parse one Agent OS line (a trailing CR or LF is ignored) into an entry of ``scope``."""
    line = line.removesuffix("\n")
    line = line.removesuffix("\r")
    fields, end = _split_head(line, where)
    if len(fields) != len(FIELDS):
        raise ParseError(f"{len(fields)} fields instead of {len(FIELDS)}", where=where, hint=_FORMAT_HINT)
    plain = {name: ",".join(parts) for name, parts in zip(FIELDS, fields)}
    try:
        check_id(plain["id"], where)
    except UsageError as exc:
        raise ParseError(exc.what, where=where, hint=exc.hint) from None
    rest = line[end:]
    text = _unescape(rest.removeprefix(" "), where)
    return Entry(id=plain["id"], text=text, scope=scope, kind=plain["kind"], type=plain["type"],
                 source_type=plain["source_type"], verification=plain["verification"], ttl=plain["ttl"],
                 tags=_tags(fields[FIELDS.index("tags")]), updated=plain["updated"],
                 ver=_ver(plain["ver"], where), origin=plain["origin"])


def _tags(parts: list[str]) -> tuple[str, ...]:
    return () if parts == [""] else tuple(parts)


def _ver(text: str, where: str) -> int:
    digits = text.removeprefix("-")
    if not digits.isascii() or not digits.isdigit() or len(digits) > 18:
        raise ParseError(f"ver {text!r} is not a whole number", where=where, hint="write the version as 1, 2, 3 ...")
    return int(text)


def parse_agentos(text: str, where: str = "agentos", *, scope: str = "memory") -> list[Entry]:
    """Every entry of an Agent OS file; blank lines and ``#`` comments are skipped."""
    text = text.removeprefix("\ufeff")
    entries = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.removesuffix("\r")
        if not line.strip() or line.startswith("#"):
            continue
        entries.append(parse_agentos_line(line, f"{where}:{number}", scope=scope))
    return entries
