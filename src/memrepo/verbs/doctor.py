"""doctor: find what a killed process left behind (ref locks) and, with --fix, clear only what is proven stale."""
from __future__ import annotations

import errno
import fcntl
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..gitstore import Store

STALE_AFTER_SECONDS = 10.0


@dataclass
class LockReport:
    path: str
    age_seconds: float
    holder_alive: bool
    stale: bool
    removed: bool = False

    def to_json(self) -> dict[str, Any]:
        return self.__dict__.copy()


def _memrepo_holder_alive(store: Store, refname: str) -> bool:
    """Is a memrepo process holding the branch lock? (flock is released by the OS when a process dies.)"""
    flock = store.git_dir / "memrepo" / "locks" / (refname.replace("/", "%") + ".flock")
    if not flock.exists():
        return False
    fd = os.open(flock, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)


def find_locks(store: Store) -> list[LockReport]:
    git_dir = store.git_dir
    now = time.time()
    out = []
    candidates = list((git_dir / "refs").rglob("*.lock")) + [p for p in (git_dir / "packed-refs.lock", git_dir / "index.lock",
                                                                          git_dir / "HEAD.lock") if p.exists()]
    for lock in sorted(candidates):
        rel = lock.relative_to(git_dir).as_posix()
        refname = rel[:-len(".lock")]
        age = now - lock.stat().st_mtime
        alive = _memrepo_holder_alive(store, refname) if refname.startswith("refs/") else False
        out.append(LockReport(rel, round(age, 1), alive, stale=not alive and age >= STALE_AFTER_SECONDS))
    return out


def doctor(path: str | os.PathLike[str], *, fix: bool = False) -> dict[str, Any]:
    store = Store.open(path)
    locks = find_locks(store)
    for lock in locks:
        if fix and lock.stale:
            (store.git_dir / lock.path).unlink(missing_ok=True)
            lock.removed = True
    problems = [l for l in locks if not l.removed]
    return {"git_dir": str(Path(store.git_dir)), "locks": [l.to_json() for l in locks], "ok": not problems}
