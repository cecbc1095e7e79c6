"""Server side: install the pre-receive hook, and judge pushed ref updates to protected branches."""
from __future__ import annotations

import os
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from ..errors import MemrepoError, NotARepository, UsageError
from ..findings import Finding
from ..gitstore import Snapshot, Store
from ..policy.config import Policy, default_policy
from .check import judge_change, policy_of, protected_branches

ZERO = "0" * 40
HOOK_MARKER = "# installed by memrepo gitops install-hook"


@dataclass
class RefUpdate:
    old: str
    new: str
    ref: str
    findings: list[Finding] = field(default_factory=list)
    checked: bool = False

    @property
    def blocked(self) -> bool:
        return any(f.blocking for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "old": self.old, "new": self.new, "checked": self.checked, "blocked": self.blocked,
                "findings": [f.to_json() for f in self.findings]}


def parse_updates(text: str) -> list[RefUpdate]:
    """pre-receive's stdin: one ``<old> <new> <ref>`` line per ref."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise UsageError(f"bad ref update line {n}: {line!r}", where="stdin", hint="expected '<old> <new> <ref>'")
        out.append(RefUpdate(parts[0], parts[1], parts[2]))
    return out


def open_with_quarantine(path: str | os.PathLike[str]) -> Store:
    """Open the receiving repository so pushed, not yet accepted objects are readable.

    During pre-receive git keeps the pushed objects in a quarantine directory named by
    GIT_OBJECT_DIRECTORY (the repository's own objects are in GIT_ALTERNATE_OBJECT_DIRECTORIES);
    libgit2 does not read those variables on a plain open, so the quarantine is added as an
    alternate object directory.
    """
    try:
        repo = pygit2.Repository(str(path))
    except pygit2.GitError:
        raise NotARepository("not a git repository", where=str(path), hint="run the hook inside the server's repository") from None
    extra = [os.environ.get("GIT_OBJECT_DIRECTORY", "")]
    extra += os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES", "").split(os.pathsep)
    own = os.path.realpath(os.path.join(repo.path, "objects"))
    for d in extra:
        if d and os.path.isdir(d) and os.path.realpath(d) != own:
            repo.odb.add_disk_alternate(os.path.abspath(d))
    return Store(repo)


def check_push(store: Store, updates: Sequence[RefUpdate]) -> list[RefUpdate]:
    """Judge each update to a protected branch by the policy on that branch before the push."""
    judge = _server_policy(store)
    protected = {Store.refname(b) for b in protected_branches(judge, store)}
    shared = {Store.refname(judge.provisional_branch)}
    for up in updates:
        if up.ref in protected:
            up.checked = True
            up.findings = _judge(store, up, judge)
        elif up.ref in shared or up.ref.startswith(Store.refname(judge.subagent_prefix)):
            up.checked = True
            up.findings = _no_rewrite(store, up)
    return list(updates)


def _no_rewrite(store: Store, up: RefUpdate) -> list[Finding]:
    """Shared agent branches (provisional, subagent branches) only move forward.

    libgit2 and `git push --force` don't check fast-forwards on the client: without this, a push
    from a stale clone would silently drop other agents' pending writes.
    """
    if up.old == ZERO or up.new == ZERO:
        return []
    old, new = pygit2.Oid(hex=up.old), pygit2.Oid(hex=up.new)
    try:
        if old == new or store.repo.descendant_of(new, old):
            return []
    except (KeyError, ValueError, pygit2.GitError):
        pass
    return [Finding("ref.non-fast-forward", "error", f"push rewrites the history of {up.ref}", path=up.ref,
                    category="ref", hint="fetch and merge first (`memrepo sync` does this), then push without --force")]


def _server_policy(store: Store) -> Policy:
    """The policy of the server's verified branch (used for new protected branches)."""
    try:
        verified = str(store.repo.config["memrepo.verified"])
    except (KeyError, pygit2.GitError):
        verified = "verified"
    tip = store.tip(verified)
    if tip is None:
        return default_policy()
    return policy_of(store.snapshot(tip), verified)


def _judge(store: Store, up: RefUpdate, server_policy: Policy) -> list[Finding]:
    branch = up.ref.removeprefix("refs/heads/")
    if up.new == ZERO:
        return [Finding("ref.delete", "error", f"deleting protected branch {branch} is not allowed", path=up.ref,
                        category="ref", hint="protected branches are never deleted; ask an administrator")]
    new = pygit2.Oid(hex=up.new)
    try:
        store.repo[new].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return [Finding("ref.not-commit", "error", f"{up.new} is not a commit this server received", path=up.ref,
                        category="ref", hint="push a branch of commits")]
    if up.old == ZERO:
        # a new protected branch: judged as a change from what it shares with the server's verified
        vtip = store.tip(server_policy.verified_branch) if up.ref != Store.refname(server_policy.verified_branch) else None
        shared = store.repo.merge_base(new, vtip) if vtip is not None else None
        base = store.snapshot(shared) if shared is not None else Snapshot(store, None, None)
        policy = server_policy
    else:
        old = pygit2.Oid(hex=up.old)
        if old != new and not store.repo.descendant_of(new, old):
            return [Finding("ref.non-fast-forward", "error", f"push rewrites the history of {branch}", path=up.ref,
                            category="ref", hint=f"fetch, rebase or merge onto {branch}, and push without --force")]
        base = store.snapshot(old)
        try:
            policy = policy_of(base, branch)
        except MemrepoError:
            policy = server_policy
    if base.tree is None:
        base = Snapshot(store, None, store.repo[store.repo.TreeBuilder().write()].peel(pygit2.Tree))
    result = judge_change(store, base, store.snapshot(new), policy, review="record")
    return result.findings


def install_hook(path: str | os.PathLike[str], *, force: bool = False, python: str | None = None) -> dict[str, Any]:
    """Write hooks/pre-receive in a (bare) server repository; it runs memrepo's checks on each push."""
    try:
        repo = pygit2.Repository(str(path))
    except pygit2.GitError:
        raise NotARepository("not a git repository", where=str(path),
                             hint="give the path of the server's bare repository, e.g. /srv/git/memory.git") from None
    hooks = Path(repo.path) / "hooks"
    hooks.mkdir(exist_ok=True)
    target = hooks / "pre-receive"
    if target.exists() and HOOK_MARKER not in target.read_text("utf-8", "replace") and not force:
        raise MemrepoError("a pre-receive hook already exists", where=str(target),
                           hint="chain it by hand (see gitops/README.md), or pass --force to replace it")
    exe = python or sys.executable
    target.write_text(hook_script(exe), "utf-8")
    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return {"hook": str(target), "python": exe, "repository": repo.path}


def hook_script(python: str) -> str:
    quoted = "'" + python.replace("'", "'\\''") + "'"
    return f"#!/bin/sh\n{HOOK_MARKER}\n# Rejects pushes to protected branches that memrepo's policies block.\nexec {quoted} -m memrepo.hooks.pre_receive\n"
