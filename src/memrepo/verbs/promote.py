"""promote / reject: a person moves pending changes onto verified, or drops them."""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import pygit2

from ..errors import Blocked, MemrepoError, NotFound, UsageError
from ..gitstore import Commit, FileBlob, Snapshot, format_message
from ..model.entry import parse_entry, path_scope_id, serialise_entry
from ..policy.checks import cap_findings
from ..repo import MemRepo
from .audit import append_audit
from .pending import diff_paths, item_key, sync_base
from .review import ReviewItem, review

REVIEWER_RE = re.compile(r"^\s*([^<>]+?)\s*<([^<>@\s]+@[^<>\s]+)>\s*$")


@dataclass
class PromoteResult:
    ids: list[str]
    verified_commit: str
    provisional_commit: str | None
    reviewer: str

    def to_json(self) -> dict[str, Any]:
        return {"ids": self.ids, "commit": self.verified_commit, "branch": "verified",
                "provisional_commit": self.provisional_commit, "reviewer": self.reviewer}


def parse_reviewer(reviewer: str) -> pygit2.Signature:
    m = REVIEWER_RE.match(reviewer or "")
    if not m:
        raise UsageError(f"reviewer {reviewer!r} is not 'Name <email>'", where="--reviewer",
                         hint='name the person who reviewed, e.g. --reviewer "Lin <lin@acme.io>"')
    return pygit2.Signature(m.group(1), m.group(2))


def _select(items: list[ReviewItem], ids: Sequence[str]) -> list[ReviewItem]:
    if not ids:
        raise UsageError("no ids given", where="promote", hint="run `memrepo review` to list pending ids")
    by_id = {i.id: i for i in items}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise NotFound(f"not pending: {', '.join(missing)}", where="provisional",
                       hint=f"pending ids: {', '.join(sorted(by_id)) or '(none)'}; run `memrepo review`",
                       data={"pending": sorted(by_id)})
    return [by_id[i] for i in dict.fromkeys(ids)]


def promote(repo_or_path: MemRepo | str, ids: Sequence[str], *, reviewer: str, at: str | None = None) -> PromoteResult:
    """Put exactly the chosen pending changes on verified in one commit recording the reviewer."""
    repo = MemRepo.open(repo_or_path)
    sig = parse_reviewer(reviewer)
    policy = repo.policy()
    who = f"{sig.name} <{sig.email}>"
    if policy.reviewers and who not in policy.reviewers:
        raise Blocked(f"{who} is not a reviewer in policy", where="policies/policy.yaml:review.reviewers",
                      hint="ask a listed reviewer to promote, or add the person to review.reviewers by a reviewed change")
    # One snapshot for everything: the items, their findings and the content promoted all come
    # from the commit that was reviewed (--at), or from provisional's tip read once, here.
    head = repo.store.snapshot(at) if at else repo.store.branch_snapshot(repo.provisional_branch)
    items = _select(review(repo, at=str(head.commit)), ids)
    blocking = [f for it in items for f in it.findings if f.blocking and f.rule != "policy.changed"]
    if blocking:
        raise Blocked(f"cannot promote while error findings remain ({', '.join(sorted({f.rule for f in blocking}))})",
                      where=", ".join(sorted({f.path for f in blocking})), hint="fix or reject the entry first",
                      data={"findings": [f.to_json() for f in blocking]})
    if any(p.startswith("policies/") for it in items for p in it.paths) and policy.policy_owners \
            and who not in policy.policy_owners:
        raise Blocked("changes to policies/ need a policy owner's review", where="policies/",
                      hint=f"policy owners: {', '.join(policy.policy_owners)}")
    chosen = {p for it in items for p in it.paths}
    source = {c.path: c for c in diff_paths(sync_base(repo, head), head) if c.path in chosen}
    changes: dict[str, bytes | FileBlob | None] = {}
    for path, ch in source.items():
        if ch.new is None:
            changes[path] = None
        elif path_scope_id(path):
            changes[path] = serialise_entry(parse_entry(ch.new, path).with_(verification="verified"))
        else:
            changes[path] = FileBlob(ch.new_mode or 0o100644, ch.new)
    ordered_ids = [it.id for it in items]

    def build(snap: Snapshot) -> Commit:
        if repo.store.write_tree(snap.tree, changes) == (snap.tree.id if snap.tree is not None else None):
            raise NotFound(f"nothing to promote: {', '.join(ordered_ids)} already on {repo.verified_branch}",
                           where=repo.verified_branch, hint="run `memrepo review` to list what is pending")
        _check_caps_after(repo, snap, changes)
        trailers = [("Memrepo-Op", "promote"), ("Reviewed-by", who), ("Memrepo-Source-Commit", str(head.commit))]
        trailers += [("Memrepo-Entry", i) for i in ordered_ids]
        return Commit(changes, format_message(f"promote: {', '.join(ordered_ids)}", "", trailers))

    vcommit, _ = repo.store.transact(repo.verified_branch, build, author=sig)
    assert vcommit is not None
    pcommit = sync_provisional(repo, settled={p: source[p].new for p in source})
    return PromoteResult(ordered_ids, str(vcommit), pcommit, who)


def _check_caps_after(repo: MemRepo, snap: Snapshot, changes: dict[str, bytes | FileBlob | None]) -> None:
    policy = repo.policy()
    by_scope: dict[str, list[str]] = {}
    for e in repo.iter_entries(snap):
        if e.entry is not None and e.path not in changes:
            by_scope.setdefault(e.scope, []).append(e.entry.text)
    for path, data in changes.items():
        loc = path_scope_id(path)
        if loc and isinstance(data, bytes):
            by_scope.setdefault(loc[0], []).append(parse_entry(data, path).text)
    findings = cap_findings(by_scope, policy)
    if findings:
        raise Blocked(findings[0].message + " on verified after this promotion", where=findings[0].path,
                      hint="promote the pending removals first, or reject some entries",
                      data={"findings": [f.to_json() for f in findings]})


def sync_provisional(repo: MemRepo, settled: dict[str, bytes | None] | None = None,
                     branch: str | None = None) -> str | None:
    """Bring provisional up to date with verified, keeping every pending change not yet settled.

    ``settled`` maps paths just promoted to the provisional content that was promoted: a path
    whose content changed again since then stays pending.
    """
    settled = settled or {}
    verified_tip = repo.store.require_tip(repo.verified_branch)
    verified = repo.store.snapshot(verified_tip)

    def build(snap: Snapshot) -> Commit | None:
        base = sync_base(repo, snap)
        if base.commit == verified_tip:
            return None
        remaining: dict[str, bytes | FileBlob | None] = {}
        for ch in diff_paths(base, snap):
            if ch.path in settled and settled[ch.path] == ch.new:
                continue
            remaining[ch.path] = FileBlob(ch.new_mode or 0o100644, ch.new) if ch.new is not None else None
        new_tree = repo.store.write_tree(verified.tree, remaining)
        changes = _tree_changes(repo, snap, new_tree)
        msg = format_message(f"sync {branch or repo.provisional_branch} with {repo.verified_branch}",
                             f"{len(remaining)} pending change(s) kept.", [("Memrepo-Op", "sync")])
        return Commit(changes, msg, extra_parents=[verified_tip])

    oid, _ = repo.store.transact(branch or repo.provisional_branch, build)
    return str(oid) if oid is not None else None


def _tree_changes(repo: MemRepo, snap: Snapshot, new_tree: pygit2.Oid) -> dict[str, bytes | FileBlob | None]:
    target = Snapshot(repo.store, None, cast(pygit2.Tree, repo.store.repo[new_tree]))
    return {c.path: (FileBlob(c.new_mode or 0o100644, c.new) if c.new is not None else None)
            for c in diff_paths(snap, target)}


def reject(repo_or_path: MemRepo | str, ids: Sequence[str], *, reason: str, reviewer: str | None = None,
           branch: str | None = None) -> dict[str, Any]:
    """Drop pending changes from provisional (restoring verified's version), recording why."""
    repo = MemRepo.open(repo_or_path)
    if not reason.strip():
        raise UsageError("a reason is required", where="--reason", hint="say why, e.g. --reason 'came from an untrusted page'")
    who = None
    if reviewer:
        sig = parse_reviewer(reviewer)
        who = f"{sig.name} <{sig.email}>"
    target = branch or repo.provisional_branch
    items = _select(review(repo, target), ids)
    keys = {it.id for it in items}

    def build(snap: Snapshot) -> Commit | None:
        base = sync_base(repo, snap)
        changes: dict[str, bytes | FileBlob | None] = {}
        for ch in diff_paths(base, snap):
            if item_key(ch.path) in keys:
                changes[ch.path] = FileBlob(ch.old_mode or 0o100644, ch.old) if ch.old is not None else None
        if not changes:
            return None
        trailers = [("Memrepo-Op", "reject"), ("Memrepo-Reason", reason)] + ([("Rejected-by", who)] if who else [])
        trailers += [("Memrepo-Entry", i) for i in sorted(keys)]
        return Commit(changes, format_message(f"reject: {', '.join(sorted(keys))}", reason, trailers))

    oid, _ = repo.store.transact(target, build)
    try:
        append_audit(repo, {"event": "rejected", "ids": sorted(keys), "reason": reason, "reviewer": who or "",
                            "branch": target, "rules": []})
    except MemrepoError:
        pass  # the rejection itself is recorded in the branch history
    return {"ids": sorted(keys), "branch": target, "commit": str(oid) if oid else None, "reason": reason}
