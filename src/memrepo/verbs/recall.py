"""recall: hybrid search over every scope of a branch, through an index cached by tree id.

The index of a branch is named by the id of its ``memories/`` tree, so it can never be stale:
a write makes a new tree id, and the next recall derives the index for it. Deriving is cheap:
the last index used for the branch (or for the other branch, which differs by the pending
writes only) is loaded from the cache, the two ``memories/`` trees are diffed with pygit2
(identical subtrees are skipped, so a one-entry write costs one small diff), and only the
entries that changed are re-tokenised (``RecallIndex.update``). A full build happens only
when nothing usable is cached. Indexes live under ``<git dir>/memrepo/recall/``.
"""
from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pygit2

from ..errors import UsageError
from ..gitstore import Snapshot, Store
from ..model.entry import MEMORIES_DIR, Entry, path_scope_id
from ..repo import MemRepo

if TYPE_CHECKING:
    from ..recall import IndexCache, RecallIndex

MAX_K = 100
# Writing an index to disk costs far more than deriving it (at 100,000 entries ~1 s against
# ~0.2 s), so an index derived by an update is written only once it is SAVE_AFTER changes away
# from the last index on disk; until then a new process loads that one and applies the diff.
SAVE_AFTER = 64
_CACHES: dict[str, IndexCache] = {}  # one per git dir, so a long-lived process (MCP server) keeps indexes in memory
_LAST: dict[tuple[str, str], str] = {}  # (git dir, branch) -> key of the last index used in this process
_UNSAVED: dict[str, tuple[str, int]] = {}  # key only in memory -> (key of the index on disk it derives from, changes)


@dataclass
class RecallResult:
    query: str
    branch: str
    commit: str | None
    k: int
    results: list[dict[str, Any]]
    index: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"query": self.query, "branch": self.branch, "commit": self.commit, "k": self.k,
                "count": len(self.results), "results": self.results, "index": self.index}


def recall(repo_or_path: MemRepo | str | os.PathLike[str], query: str, *, k: int = 5, branch: str | None = None,
           scopes: Iterable[str] | None = None) -> RecallResult:
    """The ``k`` entries of ``branch`` (default provisional) that best answer ``query``.

    Covers every scope, recall-only ones included, unless ``scopes`` narrows it. Each result
    carries ``pending``: true when the entry (as it reads here) is not on verified yet.
    """
    repo = MemRepo.open(repo_or_path)  # type: ignore[arg-type]
    if not query or not query.strip():
        raise UsageError("query is empty", where="recall", hint="give some words to search for")
    if k < 1 or k > MAX_K:
        raise UsageError(f"k must be between 1 and {MAX_K}", where="-k", hint="e.g. -k 5")
    name = _branch(repo, branch)
    wanted = _scopes(repo, scopes)
    snap = repo.store.branch_snapshot(name)
    started = time.perf_counter()
    index, source = index_for(repo, snap, name)
    built_ms = (time.perf_counter() - started) * 1000
    hits = index.search(query, k, wanted)
    verified = repo.store.branch_snapshot(repo.verified_branch) if name != repo.verified_branch else None
    results = []
    for hit in hits:
        item = hit.to_json()
        item["pending"] = _pending(repo, snap, verified, hit.scope, hit.id)
        results.append(item)
    info = {"key": index.key, "entries": len(index), "source": source, "ms": round(built_ms, 2)}
    return RecallResult(query, name, str(snap.commit) if snap.commit else None, k, results, info)


def _branch(repo: MemRepo, branch: str | None) -> str:
    if branch in (None, "", "provisional"):
        return repo.provisional_branch
    if branch == "verified":
        return repo.verified_branch
    if not branch.startswith(("refs/", "-")) and repo.store.tip(branch) is not None:
        return branch  # e.g. a subagent's branch
    raise UsageError(f"unknown branch {branch!r}", where="--branch",
                     hint="use verified or provisional (or an existing subagent branch)")


def _scopes(repo: MemRepo, scopes: Iterable[str] | None) -> set[str] | None:
    if scopes is None:
        return None
    wanted = {s for s in scopes if s}
    if not wanted:
        return None
    known = repo.policy().scopes
    unknown = sorted(wanted - set(known))
    if unknown:
        raise UsageError(f"unknown scope {unknown[0]!r}", where="--scope", hint=f"use one of: {', '.join(known)}")
    return wanted


def _pending(repo: MemRepo, snap: Snapshot, verified: Snapshot | None, scope: str, entry_id: str) -> bool:
    if verified is None:
        return False
    from ..model.entry import candidate_paths

    for path in candidate_paths(scope, entry_id):
        here = snap.blob_id(path)
        if here is not None:
            return verified.blob_id(path) != here
    return True


# -- the index of a snapshot -------------------------------------------------------------------

def memories_key(snap: Snapshot) -> str:
    """The cache key of a snapshot's index: the id of its memories/ tree ("empty" when none)."""
    oid = snap.oid(MEMORIES_DIR)
    return f"t{oid}" if oid is not None else "empty"


def forget_process_caches() -> None:
    """Drop this process's in-memory indexes (as if a new process started); the disk cache stays."""
    _CACHES.clear()
    _LAST.clear()
    _UNSAVED.clear()


def cache_for(store: Store) -> IndexCache:
    from ..recall import IndexCache

    key = str(store.git_dir.resolve())
    cache = _CACHES.get(key)
    if cache is None:
        cache = _CACHES[key] = IndexCache(store.private_dir("recall"), memory_items=4, disk_items=6)
    return cache


def index_for(repo: MemRepo, snap: Snapshot, branch: str) -> tuple[RecallIndex, str]:
    """The index of ``snap`` and how it was obtained: cache, update (from an older tree) or build."""
    from ..recall import RecallIndex

    store = repo.store
    cache = cache_for(store)
    key = memories_key(snap)
    index = cache.get(key)
    source = "cache"
    if index is None:
        derived = _derive(repo, cache, snap, key, branch)
        if derived is not None:
            index, base_key, changes = derived
            source = "update"
            saved_key, pending = _UNSAVED.pop(base_key, (base_key, 0))
            if pending + changes >= SAVE_AFTER:
                cache.put(index)
            else:
                cache.keep(index)  # memory only: the disk keeps ``saved_key``
                _UNSAVED[key] = (saved_key, pending + changes)
        else:
            index = RecallIndex(_entries(repo, snap), key)
            source = "build"
            cache.put(index)
    _LAST[(str(store.git_dir), branch)] = key
    _set_pointer(store, branch, _UNSAVED.get(key, (key, 0))[0])
    return index, source


def _derive(repo: MemRepo, cache: IndexCache, snap: Snapshot, key: str,
            branch: str) -> tuple[RecallIndex, str, int] | None:
    """Update the last index used for this branch (or a sibling branch) to ``snap`` by a tree diff.

    Returns the new index, the key it was derived from and the number of entries that changed.
    """
    store = repo.store
    new_tree = _tree(store, key)
    names = list(dict.fromkeys([branch, repo.provisional_branch, repo.verified_branch]))
    in_process = [_LAST.get((str(store.git_dir), name)) for name in names]
    for old_key in dict.fromkeys([*in_process, *(_get_pointer(store, name) for name in names)]):
        if not old_key or old_key == key:
            continue
        base = cache.get(old_key)
        if base is None:
            continue
        old_tree = _tree(store, old_key)
        if old_key != "empty" and old_tree is None:
            continue
        changed, removed = _diff(repo, old_tree, new_tree)
        return base.update(changed, removed, key), old_key, len(changed) + len(removed)
    return None


def _tree(store: Store, key: str) -> pygit2.Tree | None:
    if key == "empty" or not key.startswith("t"):
        return None
    try:
        obj = store.repo[key[1:]]
    except (KeyError, ValueError):
        return None
    return obj if isinstance(obj, pygit2.Tree) else None


def _diff(repo: MemRepo, old: pygit2.Tree | None, new: pygit2.Tree | None) -> tuple[list[Entry], list[str]]:
    """Entries added or changed, and ids removed, between two memories/ trees."""
    changed: list[Entry] = []
    removed: list[str] = []
    if old is None and new is None:
        return changed, removed
    if old is None:
        diff = new.diff_to_tree(swap=True)  # type: ignore[union-attr]
    elif new is None:
        diff = old.diff_to_tree()
    else:
        diff = old.diff_to_tree(new)
    for delta in diff.deltas:
        if delta.status != pygit2.GIT_DELTA_ADDED:
            loc = path_scope_id(f"{MEMORIES_DIR}/{delta.old_file.path}")
            if loc is not None:
                removed.append(loc[1])
        if delta.status != pygit2.GIT_DELTA_DELETED:
            path = f"{MEMORIES_DIR}/{delta.new_file.path}"
            if path_scope_id(path) is None or delta.new_file.mode not in (pygit2.GIT_FILEMODE_BLOB,
                                                                           pygit2.GIT_FILEMODE_BLOB_EXECUTABLE):
                continue
            stored = repo.stored_entry(path, delta.new_file.id)
            if stored.entry is not None:
                changed.append(stored.entry)
    return changed, removed


def _entries(repo: MemRepo, snap: Snapshot) -> Iterable[Entry]:
    for stored in repo.iter_entries(snap):
        if stored.entry is not None:
            yield stored.entry


def _pointer_path(store: Store, branch: str) -> Path:
    return store.private_dir("recall") / ("last-" + store.refname(branch).replace("/", "%"))


def _get_pointer(store: Store, branch: str) -> str | None:
    try:
        return _pointer_path(store, branch).read_text("ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def _set_pointer(store: Store, branch: str, key: str) -> None:
    path = _pointer_path(store, branch)
    if _get_pointer(store, branch) == key:
        return
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(key, "ascii")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)  # a cache hint: losing it costs a rebuild, never a wrong answer
