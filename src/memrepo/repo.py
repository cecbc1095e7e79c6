"""A memory repository: a git store plus the policy on its verified branch."""
from __future__ import annotations

import marshal
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import pygit2

from .errors import MemrepoError, NotARepository, ParseError
from .findings import Finding
from .gitstore import Snapshot, Store
from .model.entry import MEMORIES_DIR, Entry, candidate_paths, parse_entry, path_scope_id, text_digest
from .policy.config import POLICY_DIR, Policy, load_policy

CONFIG_VERIFIED = "memrepo.verified"
CONFIG_PROVISIONAL = "memrepo.provisional"
AUDIT_REF = "refs/memrepo/audit"


@dataclass(frozen=True)
class StoredEntry:
    """An entry file as found in a tree: the parsed entry, or the finding that says why it did not parse."""

    path: str
    scope: str
    id: str
    blob: str
    entry: Entry | None
    error: Finding | None = None


# Digest files of a scope (see MemRepo.text_digests): a write stores the digests it changed over the
# file of the tree it wrote on, up to _DELTA_CHAIN deep, then the whole dictionary again (~1 ms and
# 0.9 MB at 10,000 entries). The folder keeps the newest _DIGEST_FILES files.
_DELTA = "memrepo-digests-delta-1"
_DELTA_CHAIN = 8
_DIGEST_FILES = 32
_DIGESTS_KEPT = 4


class MemRepo:
    """Open with :meth:`open`; every verb takes one of these (or a path)."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._policies: dict[str, Policy] = {}
        self._entries: dict[str, StoredEntry] = {}  # by blob id + path
        self._digests: dict[str, dict[str, str]] = {}  # by scope tree id, the newest _DIGESTS_KEPT
        self._delta_depth: dict[str, int] = {}  # deltas under a digest file (by scope tree id), where known

    @classmethod
    def open(cls, path: str | os.PathLike[str] | MemRepo) -> MemRepo:
        if isinstance(path, MemRepo):
            return path
        repo = cls(Store.open(path))
        if repo.store.tip(repo.verified_branch) is None:
            raise NotARepository("not a memory repository (no verified branch)", where=str(path),
                                 hint="run `memrepo init PATH` to create one")
        return repo

    @property
    def path(self) -> Path:
        return self.store.workdir or self.store.git_dir

    def _config(self, key: str, default: str) -> str:
        try:
            return str(self.store.repo.config[key])
        except (KeyError, pygit2.GitError):
            return default

    @property
    def verified_branch(self) -> str:
        return self._config(CONFIG_VERIFIED, "verified")

    @property
    def provisional_branch(self) -> str:
        return self._config(CONFIG_PROVISIONAL, "provisional")

    # -- policy ------------------------------------------------------------------------------
    def policy_at(self, snap: Snapshot, label: str) -> Policy:
        """The policy stored in a snapshot's policies/ (cached by tree id)."""
        tree = snap.tree
        if tree is None or POLICY_DIR not in tree:
            raise ParseError("no policies/ folder", where=f"{label}:{POLICY_DIR}/",
                             hint="restore policies/ from `memrepo init` defaults")
        key = str(tree[POLICY_DIR].id)
        if key not in self._policies:
            files = {p[len(POLICY_DIR) + 1:]: b.data for p, b in snap.files(POLICY_DIR).items()}
            self._policies[key] = load_policy(files, source=label)
        return self._policies[key]

    def policy(self) -> Policy:
        """The judging policy: the one on verified, never one an agent wrote to provisional."""
        policy = self.policy_at(self.store.branch_snapshot(self.verified_branch), self.verified_branch)
        # durability.fsync on verified asks for fsynced writes (git config memrepo.fsync overrides it)
        self.store.fsync_by_policy = bool(policy.section("durability").get("fsync", False))
        return policy

    # -- entries -----------------------------------------------------------------------------
    def stored_entry(self, path: str, oid: pygit2.Oid | str) -> StoredEntry:
        key = f"{oid}:{path}"
        cached = self._entries.get(key)
        if cached is not None:
            return cached
        loc = path_scope_id(path)
        scope, eid = loc if loc else ("", path)
        data = self.store.repo[oid].read_raw()
        try:
            entry = parse_entry(data, path)
            stored = StoredEntry(path, scope, eid, str(oid), entry)
        except MemrepoError as exc:
            finding = Finding("entry.parse", "error", exc.what, path=exc.where.split(":")[0] or path,
                              line=_line_of(exc.where), hint=exc.hint, entry=eid)
            stored = StoredEntry(path, scope, eid, str(oid), None, finding)
        if len(self._entries) > 200_000:
            self._entries.clear()
        self._entries[key] = stored
        return stored

    def iter_entries(self, snap: Snapshot, scope: str | None = None) -> Iterator[StoredEntry]:
        prefix = f"{MEMORIES_DIR}/{scope}" if scope else MEMORIES_DIR
        for path, oid, mode in snap.walk(prefix):
            if path_scope_id(path) is None:
                continue
            yield self.stored_entry(path, oid)

    def entries(self, snap: Snapshot, scope: str | None = None) -> list[StoredEntry]:
        return sorted(self.iter_entries(snap, scope), key=_entry_order)

    # -- digests of entry texts, cached by the scope's tree id (exact-duplicate lookups) ---------
    def scope_tree_id(self, snap: Snapshot, scope: str) -> str:
        oid = snap.oid(f"{MEMORIES_DIR}/{scope}")
        return str(oid) if oid is not None else "empty"

    def text_digests(self, snap: Snapshot, scope: str) -> dict[str, str]:
        """``{entry id: digest of its normalised text}`` for a scope; O(1) when the cache is warm."""
        key = self.scope_tree_id(snap, scope)
        if key in self._digests:
            return dict(self._digests[key])
        digests = self._load_digests(key)
        if digests is None:
            digests = {e.id: text_digest(e.entry.text) for e in self.iter_entries(snap, scope) if e.entry is not None}
            self._save_digests(key, digests)
        self._keep_digests(key, digests)
        return dict(digests)

    def remember_digests(self, snap: Snapshot, scope: str, digests: dict[str, str],
                         base: Snapshot | None = None, changed: Iterable[str] = ()) -> None:
        """Store the digests of a scope tree we just wrote (so the next write needs no scan). With
        the ``base`` snapshot written over and the ids ``changed``, the file holds only those."""
        key = self.scope_tree_id(snap, scope)
        self._keep_digests(key, dict(digests))
        base_key = self.scope_tree_id(base, scope) if base is not None else None
        self._save_digests(key, digests, base_key, {eid: digests.get(eid) for eid in changed})

    def _keep_digests(self, key: str, digests: dict[str, str]) -> None:
        self._digests.pop(key, None)
        self._digests[key] = digests
        while len(self._digests) > _DIGESTS_KEPT:  # a long-lived process writes many trees: keep the newest
            del self._digests[next(iter(self._digests))]

    def _load_digests(self, key: str) -> dict[str, str] | None:
        """A scope's digests from the cache folder: a whole file, or a delta file and the chain of
        files under it; None when any link is missing or not one we wrote."""
        folder = self.store.private_dir("cache")
        chain: list[dict[str, str | None]] = []
        for _ in range(_DELTA_CHAIN + 1):
            try:
                data = marshal.loads((folder / f"digests-{key}.marshal").read_bytes())  # our own cache files
            except (OSError, ValueError, EOFError, TypeError):
                return None
            if isinstance(data, dict):
                for delta in reversed(chain):
                    for eid, digest in delta.items():
                        if digest is None:
                            data.pop(eid, None)
                        else:
                            data[eid] = digest
                self._delta_depth[key] = len(chain)
                return data
            if not (isinstance(data, tuple) and len(data) == 3 and data[0] == _DELTA
                    and isinstance(data[1], str) and isinstance(data[2], dict)):
                return None
            chain.append(data[2])
            key = data[1]
        return None

    def _save_digests(self, key: str, digests: dict[str, str], base_key: str | None = None,
                      delta: dict[str, str | None] | None = None) -> None:
        folder = self.store.private_dir("cache")
        depth = self._delta_depth.get(base_key, _DELTA_CHAIN) + 1 if base_key is not None else 0
        whole = depth > _DELTA_CHAIN or delta is None or not (folder / f"digests-{base_key}.marshal").exists()
        self._delta_depth[key] = 0 if whole else depth
        tmp = folder / f".digests-{key}.{os.getpid()}.tmp"
        try:
            tmp.write_bytes(marshal.dumps(digests if whole else (_DELTA, base_key, delta)))
            os.replace(tmp, folder / f"digests-{key}.marshal")
            old = sorted(folder.glob("digests-*.marshal"), key=lambda p: p.stat().st_mtime)
            for stale in old[:-_DIGEST_FILES]:
                stale.unlink(missing_ok=True)  # a delta over it then misses and is rebuilt whole
        except OSError:
            tmp.unlink(missing_ok=True)  # a cache: failing to write it only costs time

    def find_path(self, snap: Snapshot, entry_id: str) -> str | None:
        """The path of an entry id in any scope (ids are unique across scopes)."""
        if snap.tree is None or MEMORIES_DIR not in snap.tree:
            return None
        for scope_item in cast(pygit2.Tree, snap.store.repo[snap.tree[MEMORIES_DIR].id]):
            if scope_item.filemode != pygit2.GIT_FILEMODE_TREE:
                continue
            for path in candidate_paths(str(scope_item.name), entry_id):
                if snap.mode(path) is not None:
                    return path
        return None


def _entry_order(e: StoredEntry) -> tuple[str, str, str]:
    updated = e.entry.updated if e.entry is not None else ""
    return (e.scope, updated, e.id)


def _line_of(where: str) -> int:
    tail = where.rsplit(":", 1)
    return int(tail[1]) if len(tail) == 2 and tail[1].isdigit() else 0
