"""An on-disk cache of recall indexes, one file per key, with an in-process LRU in front.

Files are ``<key>.npz`` written to a temporary file in the same directory and moved into
place with ``os.replace``, so a reader sees the old file or the new one, never half of one.
They hold plain arrays and JSON (no pickle: nothing in the cache can run code when loaded).
A file that cannot be read or does not match its key is deleted and reported as a miss, so the
caller rebuilds; a cache never makes recall fail.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..model.entry import Entry
from .field import Field
from .index import Doc, RecallIndex

FORMAT = 1
_SAFE_KEY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_FIELDS = ("words", "tags", "ents")


def _file_name(key: str) -> str:
    safe = key if _SAFE_KEY.match(key) and ".." not in key else hashlib.sha256(key.encode()).hexdigest()
    return f"{safe}.npz"


def index_arrays(index: RecallIndex) -> dict[str, Any]:
    """The arrays ``np.savez`` writes for ``index``."""
    import numpy as np

    fields = dict(zip(_FIELDS, (index._words, index._tags, index._ents)))
    meta = {
        "format": FORMAT, "key": index.key, "scopes": list(index._scope_codes),
        "docs": [[d.id, d.scope, d.text, list(d.tags)] for d in index._docs],
        "vocabs": {name: list(f.vocab) for name, f in fields.items()},
    }
    arrays: dict[str, Any] = {"meta": np.frombuffer(json.dumps(meta, ensure_ascii=False).encode(), np.uint8), "scopes": index._scopes}
    for name, f in fields.items():
        arrays.update({f"{name}_indptr": f.indptr, f"{name}_docs": f.docs, f"{name}_weights": f.weights})
    return arrays


def index_from_arrays(arrays: Any, key: str) -> RecallIndex:
    """Rebuild an index from ``index_arrays`` output; ValueError when it is not a valid one for ``key``."""
    import numpy as np

    meta = json.loads(bytes(arrays["meta"]).decode())
    if meta.get("format") != FORMAT or meta.get("key") != key:
        raise ValueError("cache file is for another key or format")
    docs = [Doc(str(i), str(s), str(t), tuple(map(str, tags))) for i, s, t, tags in meta["docs"]]
    ids = [d.id for d in docs]
    codes = {str(scope): n for n, scope in enumerate(meta["scopes"])}
    scopes = np.asarray(arrays["scopes"], np.int32)
    if ids != sorted(set(ids)) or len(scopes) != len(docs) or any(codes.get(d.scope) != c for d, c in zip(docs, scopes.tolist())):
        raise ValueError("cache documents are inconsistent")
    fields = []
    for name in _FIELDS:
        vocab = {term: n for n, term in enumerate(meta["vocabs"][name])}
        f = Field(vocab, arrays[f"{name}_indptr"].astype(np.int64), arrays[f"{name}_docs"].astype(np.int32),
                  arrays[f"{name}_weights"].astype(np.float32))
        f.check(len(docs))
        fields.append(f)
    return RecallIndex._from_parts(key, docs, (fields[0], fields[1], fields[2]), codes, scopes)


class IndexCache:
    """Recall indexes by key: in memory (LRU of ``memory_items``) and on disk under ``dir``.

    ``dir`` is chosen by the caller, e.g. ``<repo>/.git/memrepo/recall``; at most ``disk_items``
    files are kept there (the oldest are pruned after each write).
    """

    def __init__(self, dir: Path, memory_items: int = 4, disk_items: int = 4) -> None:
        self.dir = Path(dir)
        self.memory_items = memory_items
        self.disk_items = disk_items
        self._lru: OrderedDict[str, RecallIndex] = OrderedDict()

    def get(self, key: str) -> RecallIndex | None:
        """The index for ``key`` from memory or disk, or None (a corrupt file counts as missing and is removed)."""
        if key in self._lru:
            self._lru.move_to_end(key)
            return self._lru[key]
        index = self._load(key)
        if index is not None:
            self._remember(index)
        return index

    def put(self, index: RecallIndex) -> None:
        """Keep ``index`` in memory and write it to disk atomically; a failed write only loses the cache."""
        self._remember(index)
        try:
            self._write(index)
        except OSError:
            pass

    def keep(self, index: RecallIndex) -> None:
        """Keep ``index`` in memory only; the caller decides when it is worth writing to disk."""
        self._remember(index)

    def get_or_build(self, key: str, entries: Callable[[], Iterable[Entry]]) -> RecallIndex:
        """The cached index for ``key``, or one built from ``entries()`` and cached."""
        index = self.get(key)
        if index is None:
            index = RecallIndex(entries(), key)
            self.put(index)
        return index

    def _remember(self, index: RecallIndex) -> None:
        self._lru[index.key] = index
        self._lru.move_to_end(index.key)
        while len(self._lru) > self.memory_items:
            self._lru.popitem(last=False)

    def _load(self, key: str) -> RecallIndex | None:
        import numpy as np

        path = self.dir / _file_name(key)
        try:
            with np.load(path, allow_pickle=False) as arrays:
                return index_from_arrays(arrays, key)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, EOFError, zipfile.BadZipFile):
            try:
                path.unlink(missing_ok=True)
            except OSError:
                pass
            return None

    def _write(self, index: RecallIndex) -> None:
        import numpy as np

        self.dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".tmp-", suffix=".npz")
        try:
            with os.fdopen(fd, "wb") as out:
                np.savez(out, **index_arrays(index))
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, self.dir / _file_name(index.key))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self._prune()

    def _prune(self) -> None:
        files = sorted(self.dir.glob("*.npz"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in files[self.disk_items:]:
            old.unlink(missing_ok=True)
