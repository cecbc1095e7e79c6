"""sync / propose: share memories through a git remote (pygit2 remotes, no git subprocess).

``sync`` fetches, fast-forwards verified to the remote's, merges the remote's provisional into
ours path by path (an entry changed differently on both sides is a conflict finding, never
settled by last writer wins), brings provisional up to date with verified and pushes. A push
that lost a race is retried from a fresh fetch. ``propose`` pushes a branch holding exactly the
chosen pending entries on top of the remote's verified, for a pull request.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pygit2

from ..errors import Conflict, MemrepoError, NotFound, UsageError
from ..findings import Finding
from ..gitstore import Commit, FileBlob, Snapshot, Store, format_message
from ..model.entry import parse_entry
from ..repo import MemRepo
from .pending import PathChange, diff_paths, item_key

PUSH_RETRIES = 8


@dataclass
class SyncResult:
    remote: str
    verified: str | None
    provisional: str | None
    pushed: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)  # paths taken from the remote's provisional
    findings: list[Finding] = field(default_factory=list)
    attempts: int = 1

    @property
    def blocked(self) -> bool:
        return any(f.blocking for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {"remote": self.remote, "verified": self.verified, "provisional": self.provisional, "pushed": self.pushed,
                "merged": self.merged, "conflicts": [f.entry for f in self.findings if f.rule == "sync.conflict"],
                "findings": [f.to_json() for f in self.findings], "blocked": self.blocked, "attempts": self.attempts}


class _Remote:
    """One named remote: fetch into refs/remotes/<name>/, push with the server's verdict collected."""

    def __init__(self, store: Store, name: str) -> None:
        try:
            self.remote = store.repo.remotes[name]
        except (KeyError, ValueError, pygit2.GitError):
            raise NotFound(f"no remote named {name!r}", where="remote",
                           hint="add one with `git remote add origin URL`, or pass --remote") from None
        self.store, self.name = store, name
        self.messages: list[str] = []

    def fetch(self) -> None:
        try:
            self.remote.fetch([f"+refs/heads/*:refs/remotes/{self.name}/*"], callbacks=self._callbacks())
        except pygit2.GitError as exc:
            raise MemrepoError(f"fetch from {self.name} failed: {exc}", where=self.remote.url or self.name,
                               hint="check the remote URL and that the server is reachable") from None

    def tip(self, branch: str) -> pygit2.Oid | None:
        return self.store.tip(f"refs/remotes/{self.name}/{branch}")

    def push(self, specs: list[str]) -> dict[str, str]:
        """Push refspecs; returns {ref: reason} for refs the server refused (empty: all accepted)."""
        cb = self._callbacks()
        try:
            self.remote.push(specs, callbacks=cb)
        except pygit2.GitError as exc:
            for spec in specs:
                cb.refused.setdefault(spec.lstrip("+").split(":")[-1], str(exc))
        return cb.refused

    def _callbacks(self) -> _Callbacks:
        return _Callbacks(self.messages)


class _Callbacks(pygit2.RemoteCallbacks):
    """Collects the server's sideband text (hook output) and per-ref refusals."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__()
        self.messages = messages
        self.refused: dict[str, str] = {}

    def sideband_progress(self, string: str) -> None:
        self.messages.append(string)

    def push_update_reference(self, refname: str, message: str) -> None:
        if message:
            self.refused[refname] = message


def _ensure_branch(store: Store, branch: str, target: pygit2.Oid | None) -> None:
    if store.tip(branch) is None and target is not None:
        store.cas_ref(branch, target, None, f"memrepo sync: create {branch}")


def sync(repo_or_path: MemRepo | str, *, remote: str = "origin", ours: Sequence[str] = (), theirs: Sequence[str] = (),
         push: bool = True) -> SyncResult:
    """Fetch, update verified and provisional from the remote, push; conflicts are findings."""
    from .promote import sync_provisional

    store = repo_or_path.store if isinstance(repo_or_path, MemRepo) else Store.open(repo_or_path)
    rem = _Remote(store, remote)
    both = set(ours) & set(theirs)
    if both:
        raise UsageError(f"both --ours and --theirs name {', '.join(sorted(both))}", where="sync", hint="pick one side per entry")
    for attempt in range(1, PUSH_RETRIES + 1):
        rem.fetch()
        verified, provisional = _branch_names(store)
        _ensure_branch(store, verified, rem.tip(verified))
        repo = MemRepo.open(repo_or_path if isinstance(repo_or_path, MemRepo) else store.git_dir)
        _ensure_branch(store, provisional, rem.tip(provisional) or store.tip(verified))
        result = SyncResult(remote, None, None, attempts=attempt)
        push_verified = _update_verified(store, rem, verified, result)
        _merge_provisional(repo, rem, provisional, set(ours), set(theirs), result)
        if result.blocked:
            result.verified, result.provisional = _hex(store.tip(verified)), _hex(store.tip(provisional))
            return result
        sync_provisional(repo)
        result.verified, result.provisional = _hex(store.tip(verified)), _hex(store.tip(provisional))
        if not push:
            return result
        specs = [f"refs/heads/{provisional}:refs/heads/{provisional}"] if store.tip(provisional) != rem.tip(provisional) else []
        if push_verified:
            specs.insert(0, f"refs/heads/{verified}:refs/heads/{verified}")
        if not specs:
            return result
        rem.messages.clear()
        refused = rem.push(specs)
        if not refused:
            result.pushed = [s.split(":")[-1] for s in specs]
            rem.fetch()
            return result
        if not any(_lost_race(msg) for msg in refused.values()):
            server = "".join(rem.messages).strip()
            for ref, msg in sorted(refused.items()):
                result.findings.append(Finding("sync.push-rejected", "error", f"the remote refused {ref}: {msg}", path=ref,
                                               category="sync", excerpt=server[-2000:],
                                               hint="read the server's findings above; fix or reject the entries, then sync again"))
            return result
    raise Conflict(f"the remote kept moving ({PUSH_RETRIES} attempts)", where=remote, hint="run `memrepo sync` again")


def _lost_race(msg: str) -> bool:
    low = msg.lower()
    return any(k in low for k in ("non-fast-forward", "fetch first", "non-fastforward", "stale info", "cannot lock ref",
                                  "failed to update ref", "reference already exists",
                                  "not present locally"))


def _branch_names(store: Store) -> tuple[str, str]:
    def cfg(key: str, default: str) -> str:
        try:
            return str(store.repo.config[key])
        except (KeyError, pygit2.GitError):
            return default

    return cfg("memrepo.verified", "verified"), cfg("memrepo.provisional", "provisional")


def _hex(oid: pygit2.Oid | None) -> str | None:
    return str(oid) if oid is not None else None


def _update_verified(store: Store, rem: _Remote, branch: str, result: SyncResult) -> bool:
    """Fast-forward verified to the remote's; True when ours is ahead (a local promotion to push)."""
    local, remote = store.tip(branch), rem.tip(branch)
    if remote is None or local == remote:
        return remote is None and local is not None
    if local is None or store.repo.descendant_of(remote, local):
        store.set_ref(branch, remote, local, f"memrepo sync: fast-forward to {rem.name}/{branch}")
        return False
    if store.repo.descendant_of(local, remote):
        return True
    result.findings.append(Finding("sync.verified-diverged", "error",
                                   f"local {branch} and {rem.name}/{branch} have diverged", path=f"refs/heads/{branch}",
                                   category="sync", hint=f"verified is never merged silently: reset it to {rem.name}/{branch} "
                                                         "and promote your entries again"))
    return False


def _merge_provisional(repo: MemRepo, rem: _Remote, branch: str, ours: set[str], theirs: set[str],
                       result: SyncResult) -> None:
    store = repo.store
    remote_tip = rem.tip(branch)
    local_tip = store.tip(branch)
    if remote_tip is None or local_tip is None or local_tip == remote_tip or store.repo.descendant_of(local_tip, remote_tip):
        return
    if store.repo.descendant_of(remote_tip, local_tip):
        store.set_ref(branch, remote_tip, local_tip, f"memrepo sync: fast-forward to {rem.name}/{branch}")
        result.merged.append("(fast-forward)")
        return
    conflicts: list[Finding] = []

    def build(snap: Snapshot) -> Commit | None:
        conflicts.clear()
        assert snap.commit is not None
        base_oid = store.repo.merge_base(snap.commit, remote_tip)
        base = store.snapshot(base_oid) if base_oid is not None else Snapshot(store, None, None)
        mine = {c.path: c for c in diff_paths(base, snap)}
        changes: dict[str, bytes | FileBlob | None] = {}
        for ch in diff_paths(base, store.snapshot(remote_tip)):
            own = mine.get(ch.path)
            key = item_key(ch.path)
            if own is not None and (own.new != ch.new or own.new_mode != ch.new_mode):
                if key in ours:
                    continue
                if key not in theirs:
                    conflicts.append(_conflict(ch.path, key, own, ch, rem.name))
                    continue
            elif own is not None:
                continue  # the same change on both sides
            changes[ch.path] = FileBlob(ch.new_mode or 0o100644, ch.new) if ch.new is not None else None
        if conflicts:
            return None
        result.merged[:] = sorted(changes)
        msg = format_message(f"sync: merge {rem.name}/{branch}", f"{len(changes)} change(s) taken from {rem.name}.",
                             [("Memrepo-Op", "sync")])
        return Commit(changes, msg, extra_parents=[remote_tip])

    store.transact(branch, build)
    result.findings.extend(conflicts)


def _conflict(path: str, key: str, ours: PathChange, theirs: PathChange, remote: str) -> Finding:
    def text(data: bytes | None) -> str:
        if data is None:
            return "(removed)"
        try:
            return parse_entry(data, path).text
        except MemrepoError:
            return data.decode("utf-8", "replace")

    return Finding("sync.conflict", "error", f"{key} was changed here and on {remote} since the last sync", path=path,
                   entry=key, category="sync",
                   hint=f"nothing was overwritten; keep one side: `memrepo sync --ours {key}` or `memrepo sync --theirs {key}`",
                   extra={"ours": text(ours.new), "theirs": text(theirs.new), "base": text(ours.old)})


def propose(repo_or_path: MemRepo | str, ids: Sequence[str], *, remote: str = "origin",
            branch: str | None = None) -> dict[str, Any]:
    """Push a branch holding exactly these pending entries on top of the remote's verified."""
    from .promote import _select
    from .review import review

    repo = MemRepo.open(repo_or_path)
    store = repo.store
    rem = _Remote(store, remote)
    rem.fetch()
    base_tip = rem.tip(repo.verified_branch)
    if base_tip is None:
        raise NotFound(f"{remote} has no {repo.verified_branch} branch", where=f"{remote}/{repo.verified_branch}",
                       hint="push verified to the remote first (`git push origin verified`)")
    items = _select(review(repo), ids)
    head = store.branch_snapshot(repo.provisional_branch)
    chosen = {p for it in items for p in it.paths}
    changes: dict[str, bytes | FileBlob | None] = {}
    for path in chosen:
        data, mode = head.read(path), head.mode(path)
        changes[path] = FileBlob(mode or 0o100644, data) if data is not None else None
    names = [it.id for it in items]
    name = branch or f"propose/{names[0]}" + (f"-and-{len(names) - 1}" if len(names) > 1 else "")
    base = store.snapshot(base_tip)
    tree = store.write_tree(base.tree, changes)
    trailers = [("Memrepo-Op", "propose")] + [("Memrepo-Entry", i) for i in names]
    oid = store.create_commit([base_tip], tree, format_message(f"propose: {', '.join(names)}", "", trailers))
    store.repo.references.create(Store.refname(name), oid, force=True)
    refused = rem.push([f"+refs/heads/{name}:refs/heads/{name}"])
    if refused:
        raise MemrepoError(f"the remote refused {name}: {'; '.join(refused.values())}", where=f"{remote}/{name}",
                           hint="".join(rem.messages).strip() or "check push access to the remote")
    return {"branch": name, "commit": str(oid), "base": str(base_tip), "ids": names, "remote": remote,
            "paths": sorted(chosen)}
