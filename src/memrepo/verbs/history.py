"""log and show: history of the repository or of one entry, with provenance from trailers."""
from __future__ import annotations

from typing import Any

import pygit2

from ..errors import NotFound
from ..gitstore import NEWEST_FIRST, parse_trailers
from ..model.entry import check_id, parse_entry
from ..repo import MemRepo


def _commit_json(commit: pygit2.Commit) -> dict[str, Any]:
    trailers = parse_trailers(commit.message)
    return {"commit": str(commit.id), "time": commit.commit_time, "author": f"{commit.author.name} <{commit.author.email}>",
            "subject": commit.message.splitlines()[0] if commit.message else "",
            "trailers": {k: v if len(v) > 1 else v[0] for k, v in trailers.items()}}


def log(repo_or_path: MemRepo | str, *, branch: str | None = None, entry_id: str | None = None,
        limit: int = 50) -> list[dict[str, Any]]:
    """Commits on a branch (default provisional), newest first; with ``entry_id`` only those touching it."""
    repo = MemRepo.open(repo_or_path)
    branch = branch or repo.provisional_branch
    tip = repo.store.require_tip(branch)
    path = None
    if entry_id:
        check_id(entry_id)
        path = repo.find_path(repo.store.snapshot(tip), entry_id)
        if path is None:
            path = _find_in_history(repo, tip, entry_id)
    out = []
    for commit in repo.store.repo.walk(tip, NEWEST_FIRST):
        if path is not None and not _touches(commit, path):
            continue
        item = _commit_json(commit)
        if path is not None:
            try:
                blob = commit.tree[path]
                item["text"] = parse_entry(repo.store.repo[blob.id].read_raw(), path).text
            except (KeyError, Exception):  # noqa: BLE001 - removed or unparsable at that commit
                item["text"] = None
        out.append(item)
        if len(out) >= limit:
            break
    return out


def _touches(commit: pygit2.Commit, path: str) -> bool:
    def blob_at(c: pygit2.Commit) -> str | None:
        try:
            return str(c.tree[path].id)
        except KeyError:
            return None

    mine = blob_at(commit)
    if not commit.parents:
        return mine is not None
    return all(blob_at(p) != mine for p in commit.parents)


def _find_in_history(repo: MemRepo, tip: pygit2.Oid, entry_id: str) -> str:
    for commit in repo.store.repo.walk(tip, NEWEST_FIRST):
        if entry_id in parse_trailers(commit.message).get("Memrepo-Entry", []):
            for parent in commit.parents or []:
                for d in parent.tree.diff_to_tree(commit.tree).deltas:
                    if d.old_file.path.endswith(f"/{entry_id}.md"):
                        return d.old_file.path
    raise NotFound(f"no entry {entry_id!r} in the history", where=entry_id, hint="run `memrepo log` to list commits")


def show(repo_or_path: MemRepo | str, entry_id: str, *, branch: str | None = None) -> dict[str, Any]:
    """One entry's fields and text on a branch (provisional by default, falling back to verified)."""
    repo = MemRepo.open(repo_or_path)
    check_id(entry_id)
    for name in ([branch] if branch else [repo.provisional_branch, repo.verified_branch]):
        snap = repo.store.branch_snapshot(name)
        path = repo.find_path(snap, entry_id)
        if path is None:
            continue
        stored = repo.stored_entry(path, snap.oid(path))  # type: ignore[arg-type]
        in_verified = repo.find_path(repo.store.branch_snapshot(repo.verified_branch), entry_id) is not None
        out: dict[str, Any] = {"id": entry_id, "branch": name, "path": path, "scope": stored.scope,
                               "in_verified": in_verified}
        if stored.entry is not None:
            out.update(stored.entry.fields())
            out["text"] = stored.entry.text
        else:
            out["error"] = stored.error.to_json() if stored.error else None
        return out
    raise NotFound(f"no entry {entry_id!r}", where=branch or "provisional/verified",
                   hint="run `memrepo review` or `memrepo log` to find ids")
