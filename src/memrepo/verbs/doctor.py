"""doctor: find what a killed process left behind (ref locks) and, with --fix, clear only what is proven stale.

A ``<ref>.lock`` is proven stale when no memrepo process holds the branch's lock (an flock the
OS drops when its holder dies), no process has the lock file open (libgit2 keeps it open while
it holds it), and either the memrepo writer that recorded it was about to take that lock is
dead and the lock's content matches its update, or the lock is older than a git ref update
could ever take (STALE_AFTER_SECONDS). Anything else is reported and left alone.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from ..gitstore import STALE_AFTER_SECONDS, RefLock, Store, inspect_ref_lock, processes_with_open

__all__ = ["STALE_AFTER_SECONDS", "LockReport", "doctor", "find_broken_refs", "find_locks"]


@dataclass
class LockReport:
    path: str
    age_seconds: float
    holder_alive: bool
    stale: bool
    removed: bool = False
    reason: str = ""
    open_by: list[int] = field(default_factory=list)
    left_by_pid: int | None = None

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def _report(rel: str, info: RefLock) -> LockReport:
    return LockReport(rel, info.age_seconds, info.holder_alive, info.stale, reason=info.reason, open_by=info.open_by,
                      left_by_pid=info.intent_pid if info.proven_by_intent else None)


def _other_lock(store: Store, lock: Path) -> LockReport:
    """packed-refs.lock, index.lock, HEAD.lock: no memrepo record, so only age and open files count."""
    import time

    rel = lock.relative_to(store.git_dir).as_posix()
    age = round(max(0.0, time.time() - lock.stat().st_mtime), 1)
    open_by = processes_with_open(lock)
    stale = not open_by and age >= STALE_AFTER_SECONDS
    reason = (f"process {', '.join(map(str, open_by))} has it open; wait for it" if open_by else
              f"no process has it open and it is {age:.0f}s old" if stale else
              "recent: a git process may still be writing; check again in a few seconds")
    return LockReport(rel, age, False, stale, reason=reason, open_by=open_by)


def find_locks(store: Store) -> list[LockReport]:
    git_dir = store.git_dir
    out = []
    for lock in sorted((git_dir / "refs").rglob("*.lock")):
        rel = lock.relative_to(git_dir).as_posix()
        try:
            info = inspect_ref_lock(store, rel[:-len(".lock")])
        except OSError:
            continue
        if info is not None:
            out.append(_report(rel, info))
    for lock in (git_dir / "packed-refs.lock", git_dir / "index.lock", git_dir / "HEAD.lock"):
        try:
            out.append(_other_lock(store, lock))
        except FileNotFoundError:
            continue
    return out


def find_broken_refs(store: Store) -> list[dict[str, Any]]:
    """Refs that do not point at an existing commit (what a power cut without fsync can leave)."""
    out = []
    for name in store.repo.references:
        try:
            ref = store.repo.references.get(name)
            if ref is None or ref.type != pygit2.enums.ReferenceType.DIRECT:
                continue
            store.repo[ref.target].peel(pygit2.Commit)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            out.append({"ref": name, "problem": f"points at a missing or unreadable object ({exc})",
                        "hint": "restore it from a clone or the server: git update-ref REF COMMIT"})
    return out


def doctor(path: str | os.PathLike[str], *, fix: bool = False) -> dict[str, Any]:
    """Report leftover locks and broken refs; ``fix`` removes the locks proven stale (never a live one)."""
    store = Store.open(path)
    locks = find_locks(store)
    for lock in locks:
        if fix and lock.stale:
            (store.git_dir / lock.path).unlink(missing_ok=True)
            lock.removed = True
    broken = find_broken_refs(store)
    problems = [lk for lk in locks if not lk.removed]
    return {"git_dir": str(Path(store.git_dir)), "locks": [lk.to_json() for lk in locks], "refs": broken,
            "fsync": store.durable, "ok": not problems and not broken}
