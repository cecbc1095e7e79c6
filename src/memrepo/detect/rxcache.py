"""Compiled regular expressions kept across processes, in the detect cache.

``re`` compiles in Python: it parses a pattern and generates its matcher code, ~0.5 ms for one of
the rule files' patterns, and a fresh process's first 1 KB entry needs ~160 of them (~60 ms of a
~80 ms scan, paid by every CLI, pre-commit and server-hook run). Handing finished code to the
matcher takes ~20 us. So the code each process generates is kept: at exit (``flush``) it is added to one file
of the detect cache (``rxcode-<key>.bin``, keyed by the Python build, whose matcher code it is),
and a later process reads a pattern's code from there.

The file is data, not code Python runs: ``_sre`` validates what it is given and rejects malformed
code. Like the rest of the detect cache it is trusted as the user's home directory is: a tampered
file could make a pattern match nothing (as a tampered rule spec could); CI and server hooks that
must not trust it start without one (see cache.py). A damaged, foreign or unreadable file is
ignored; ``MEMREPO_CACHE_DIR=off`` turns the cache off. Patterns with named groups are not kept.

This reads ``re``'s internals (``re._parser``, ``re._compiler``, ``_sre.compile``), as
``re._compiler.compile`` itself does; on a Python whose internals differ, every pattern falls back
to ``re.compile``.
"""
from __future__ import annotations

import atexit
import re
import struct
import sys
from array import array
from functools import cache
from hashlib import blake2b
from typing import Any

VERSION = 1
MAX_ENTRIES = 20_000  # a file grown past this (many policy versions) starts over
_HEAD = b"memrepo-rxcode-1\n"
_RECORD = struct.Struct("<12sIIII")  # key, flags, groups, offset (in words, from the code's start), length

Table = dict[bytes, tuple[int, int, int, int]]
_table: Table | None = None  # by key: (flags, groups, offset, length)
_code: Any = b""  # the file's code words (a read-only map of it)
_new: dict[bytes, tuple[int, int, array[int]]] = {}  # compiled by this process, written at exit
_usable = array("I").itemsize == 4  # the file holds 32-bit words


@cache
def compile_cached(source: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(source, flags)``, once per process, with the matcher code read from the cache
    file when it is there."""
    global _usable
    if not _usable:
        return re.compile(source, flags)
    flags = int(flags)  # as re.compile does: a RegexFlag's arithmetic goes through enum, ~2x the parse
    key = _key(source, flags)
    table = _load() if _table is None else _table
    try:
        import _sre

        got = table.get(key)
        if got is not None and got[1] >= 1 and 4 * (got[2] + got[3]) <= len(_code):
            out_flags, groups, offset, length = got
            code = array("I")
            code.frombytes(_code[4 * offset: 4 * (offset + length)])
            return _sre.compile(source, out_flags, code.tolist(), groups - 1, {}, (None,) * groups)  # type: ignore[no-any-return]
        from re import _compiler, _parser  # type: ignore[attr-defined]

        # as re._compiler.compile does, keeping the code
        parsed = _parser.parse(source, flags)
        if parsed.state.groupdict:
            return re.compile(source, flags)
        words = _compiler._code(parsed, flags)
        out_flags, groups = flags | parsed.state.flags, parsed.state.groups
        rx = _sre.compile(source, out_flags, words, groups - 1, {}, (None,) * groups)
    except re.error:
        raise
    except Exception:  # noqa: BLE001 - another Python's internals, or code the matcher rejects
        _usable = False
        return re.compile(source, flags)
    if not _new:
        atexit.register(flush)
    _new[key] = (out_flags, groups, array("I", words))
    return rx  # type: ignore[no-any-return]


def _key(source: str, flags: int) -> bytes:
    return blake2b(f"{flags}\0{source}".encode("utf-8", "surrogatepass"), digest_size=12).digest()


def _file_key() -> str:
    import _sre

    from .cache import content_key

    return content_key(f"rxcode-{VERSION}", sys.version, sys.implementation.cache_tag or "", str(_sre.MAGIC),
                       str(_sre.CODESIZE), sys.byteorder)


def _load() -> Table:
    """The cache file's index, its code mapped (pages are read when a pattern's code is)."""
    global _table, _code
    from .cache import blob_path

    _table, _code = {}, b""
    try:
        path = blob_path("rxcode", _file_key(), ".bin")
        if path is not None:
            import mmap

            with open(path, "rb") as fh:
                mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
            _table, _code = _parse(mapped)
    except Exception:  # noqa: BLE001 - no file, an empty one, no _sre here: compile_cached() compiles
        _table, _code = {}, b""
    return _table


def _parse(blob: Any) -> tuple[Table, Any]:
    """The index and the code of a cache file; empty when it is not one this version wrote whole."""
    try:
        if blob[: len(_HEAD)] != _HEAD:
            return {}, b""
        (count,) = struct.unpack_from("<Q", blob, len(_HEAD))
        start = len(_HEAD) + 8
        end = start + count * _RECORD.size
        if end > len(blob):
            return {}, b""
        table = {key: (f, g, o, n) for key, f, g, o, n in _RECORD.iter_unpack(blob[start:end])}
        return table, memoryview(blob)[end:]
    except (ValueError, TypeError, struct.error):
        return {}, b""


def take_new() -> dict[bytes, tuple[int, int, array[int]]]:
    """The code this process generated and has not written, handed over and forgotten here: a forked
    worker returns it to its parent, as a terminated worker runs no exit handler."""
    out = dict(_new)
    _new.clear()
    return out


def adopt(entries: dict[bytes, tuple[int, int, array[int]]]) -> None:
    """Code a worker generated, written with this process's own at exit."""
    if entries and not _new:
        atexit.register(flush)
    for key, entry in entries.items():
        _new.setdefault(key, entry)


def flush() -> None:
    """Add the code this process generated to the file (re-read first: another process may have
    added some). Runs at exit; a process that leaves by ``os._exit`` (the CLI) calls it itself."""
    from .cache import read_blob, write_blob

    if not _new:
        return
    try:
        file_key = _file_key()
        blob = read_blob("rxcode", file_key, ".bin")
        table, code_bytes = _parse(blob) if blob is not None else ({}, b"")
        if len(table) + len(_new) > MAX_ENTRIES:
            table, code_bytes = {}, b""
        # a file cut short keeps the entries whose code it holds whole
        table = {key: entry for key, entry in table.items() if 4 * (entry[2] + entry[3]) <= len(code_bytes)}
        words = array("I")
        words.frombytes(code_bytes[: len(code_bytes) // 4 * 4])
        records = dict(table)
        for key, (out_flags, groups, own) in _new.items():
            if key not in records:
                records[key] = (out_flags, groups, len(words), len(own))
                words.extend(own)
        index = b"".join(_RECORD.pack(key, *entry) for key, entry in records.items())
        write_blob("rxcode", file_key, ".bin", _HEAD + struct.pack("<Q", len(records)) + index + words.tobytes())
        _new.clear()
    except Exception:  # noqa: BLE001,S110 - a cache that cannot be written is a miss next time, never an error
        pass
