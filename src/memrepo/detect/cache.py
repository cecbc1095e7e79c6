"""On-disk cache of built rule specs and model tables, keyed by the content hash of their sources.

Parsing and validating the rule files (YAML, JSON Schema, needle analysis) costs hundreds of
milliseconds; every ``memrepo remember`` would pay it. The built spec is plain JSON, as are the
detect-secrets plugins' patterns (importing the package costs ~130 ms) and the learned model's
fields but its weights (parsing its file costs ~3 ms); the model's weight table is raw bytes
(decompressing it costs ~6 ms; read memory-mapped), the compiled matcher code of the patterns an
index and raw words (see rxcache.py). Each is written to a temporary file and moved into place
(a reader sees the whole file or none, and a mapping of the old one stays valid); no pickle, so
nothing in the cache can run code. An unreadable or unwritable cache is a miss, never an error.

Location: ``$MEMREPO_CACHE_DIR/detect``, else ``$XDG_CACHE_HOME/memrepo/detect``, else
``~/.cache/memrepo/detect``; ``MEMREPO_CACHE_DIR=off`` turns it off.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mmap

_MEMORY: dict[str, Any] = {}


def content_key(*parts: Iterable[tuple[str, bytes]] | str) -> str:
    """A hash of names and contents (or plain strings)."""
    h = hashlib.sha256()
    for part in parts:
        items = [("", part.encode())] if isinstance(part, str) else part
        for name, data in items:
            h.update(name.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()[:32]


def cache_dir() -> str | None:
    """The cache folder (pathlib and tempfile are not imported: this runs on every CLI call)."""
    env = os.environ.get("MEMREPO_CACHE_DIR")
    if env == "off":
        return None
    if env:
        return os.path.join(env, "detect")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "memrepo", "detect")


def cached(kind: str, key: str, build: Callable[[], Any]) -> Any:
    """``build()``'s JSON-able result, from this process, the disk cache, or built and stored."""
    mem_key = f"{kind}-{key}"
    if mem_key in _MEMORY:
        return _MEMORY[mem_key]
    folder = cache_dir()
    path = os.path.join(folder, f"{mem_key}.json") if folder else None
    value = _read(path) if path else None
    if value is None:
        value = build()
        if path:
            _write(path, value)
    _MEMORY[mem_key] = value
    return value


def cached_bytes(kind: str, key: str, build: Callable[[], bytes], size: int, *, mapped: bool = False) -> bytes | mmap.mmap:
    """``build()``'s bytes, from the disk cache (when the file holds exactly ``size`` bytes) or built
    and stored. ``mapped``: a cached file is returned memory-mapped, read-only (pages are read when
    touched; cache files are replaced whole, never rewritten in place, so a mapping stays valid)."""
    folder = cache_dir()
    path = os.path.join(folder, f"{kind}-{key}.bin") if folder else None
    if path:
        try:
            with open(path, "rb") as fh:
                if mapped:
                    if os.fstat(fh.fileno()).st_size == size and size:
                        import mmap

                        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
                else:
                    data = fh.read(size + 1)
                    if len(data) == size:
                        return data
        except (OSError, ValueError):
            pass
    data = build()
    if path and len(data) == size:
        _write(path, data)
    return data


def blob_path(kind: str, key: str, suffix: str) -> str | None:
    """Where the cache file ``<kind>-<key><suffix>`` lies (None: no cache)."""
    folder = cache_dir()
    return os.path.join(folder, f"{kind}-{key}{suffix}") if folder else None


def read_blob(kind: str, key: str, suffix: str) -> bytes | None:
    """The bytes of the cache file ``<kind>-<key><suffix>``, None when there is none (or no cache)."""
    path = blob_path(kind, key, suffix)
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def write_blob(kind: str, key: str, suffix: str, data: bytes) -> None:
    """Replace the cache file ``<kind>-<key><suffix>`` with ``data`` (readers see the old or the new whole)."""
    path = blob_path(kind, key, suffix)
    if path:
        _write(path, data)


def _read(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def _write(path: str, value: Any) -> None:
    import tempfile

    try:
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=os.path.splitext(path)[1])
        try:
            if isinstance(value, bytes):
                with os.fdopen(fd, "wb") as fb:
                    fb.write(value)
            else:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(value, fh, ensure_ascii=False, separators=(",", ":"))
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        pass
