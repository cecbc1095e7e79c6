"""What provisional holds that verified lacks: changes since the last sync point."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pygit2

from ..gitstore import Snapshot
from ..model.entry import path_scope_id
from ..repo import MemRepo


@dataclass(frozen=True)
class PathChange:
    path: str
    change: str  # "added" | "changed" | "removed"
    old: bytes | None
    new: bytes | None
    old_mode: int | None
    new_mode: int | None


def sync_base(repo: MemRepo, head: Snapshot, verified_branch: str | None = None) -> Snapshot:
    """The verified commit provisional was last brought up to date with (their merge base)."""
    vtip = repo.store.require_tip(verified_branch or repo.verified_branch)
    if head.commit is None:
        return repo.store.snapshot(vtip)
    base = repo.store.repo.merge_base(head.commit, vtip)
    return repo.store.snapshot(base if base is not None else vtip)


def diff_paths(base: Snapshot, head: Snapshot) -> Iterator[PathChange]:
    """Changed files between two snapshots, by path (renames split into remove + add)."""
    repo = head.store.repo
    if base.tree is None or head.tree is None:
        return
    for d in base.tree.diff_to_tree(head.tree).deltas:
        old_blob = repo[d.old_file.id].read_raw() if d.status != pygit2.GIT_DELTA_ADDED and d.old_file.mode != 0o160000 else None
        new_blob = repo[d.new_file.id].read_raw() if d.status != pygit2.GIT_DELTA_DELETED and d.new_file.mode != 0o160000 else None
        if d.status == pygit2.GIT_DELTA_ADDED:
            yield PathChange(d.new_file.path, "added", None, new_blob, None, d.new_file.mode)
        elif d.status == pygit2.GIT_DELTA_DELETED:
            yield PathChange(d.old_file.path, "removed", old_blob, None, d.old_file.mode, None)
        else:
            yield PathChange(d.new_file.path, "changed", old_blob, new_blob, d.old_file.mode, d.new_file.mode)


def pending_changes(repo: MemRepo, branch: str | None = None,
                    at: str | None = None) -> tuple[Snapshot, Snapshot, list[PathChange]]:
    """(base, head, changes) for a provisional-like branch (or one of its commits, ``at``) against verified."""
    head = repo.store.snapshot(at) if at else repo.store.branch_snapshot(branch or repo.provisional_branch)
    base = sync_base(repo, head)
    return base, head, list(diff_paths(base, head))


def item_key(path: str) -> str:
    """The review item a path belongs to: an entry id, or a skill name, or the path itself."""
    loc = path_scope_id(path)
    if loc:
        return loc[1]
    from ..model.skill import locate

    skill = locate(path)  # skills/[category/]name/...: the skill's name (names are unique across categories)
    if skill is not None:
        return skill[1]
    return path
