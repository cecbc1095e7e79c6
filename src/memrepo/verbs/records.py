"""Review records: which changes in a range of commits a person reviewed.

A review record is a commit in the range carrying a ``Reviewed-by: Name <email>`` trailer
(as ``memrepo promote`` writes). It covers an entry when it is a promotion commit
(``Memrepo-Op: promote``) listing the entry's id in ``Memrepo-Entry`` and it introduced the
entry's final content (a later, unreviewed edit of the same file is not covered). A change to
``policies/`` is covered by a commit with a Reviewed-by trailer naming a policy owner that
introduced the file's final content.

Trailers are records, not authentication: on a forge the required review and code-owner
rules authenticate the reviewer, on a plain git server restrict who may push to verified.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pygit2

from ..errors import MemrepoError
from ..findings import Finding
from ..gitstore import Snapshot, Store, parse_trailers
from ..model.entry import parse_entry, path_scope_id
from ..policy.config import POLICY_DIR, Policy
from .pending import PathChange
from .promote import REVIEWER_RE


@dataclass(frozen=True)
class Record:
    commit: str
    reviewer: str
    op: str
    ids: frozenset[str]


def _reviewer(value: str) -> str | None:
    m = REVIEWER_RE.match(value)
    return f"{m.group(1)} <{m.group(2)}>" if m else None


def _record(commit: pygit2.Commit) -> Record | None:
    trailers = parse_trailers(commit.message)
    for value in trailers.get("Reviewed-by", []):
        who = _reviewer(value)
        if who:
            return Record(str(commit.id), who, (trailers.get("Memrepo-Op") or [""])[0],
                          frozenset(trailers.get("Memrepo-Entry", [])))
    return None


def _blob_at(tree: pygit2.Tree, path: str) -> pygit2.Oid | None:
    try:
        return tree[path].id
    except KeyError:
        return None


def introducers(store: Store, base: pygit2.Oid | None, head: pygit2.Oid, paths: Iterable[str]) -> dict[str, list[pygit2.Commit]]:
    """For each path, the commits in base..head whose content of the path differs from every parent's."""
    wanted = list(paths)
    out: dict[str, list[pygit2.Commit]] = {p: [] for p in wanted}
    if not wanted:
        return out
    walker = store.repo.walk(head, pygit2.enums.SortMode.TOPOLOGICAL)
    if base is not None:
        walker.hide(base)
    for commit in walker:
        parents = commit.parents
        for path in wanted:
            mine = _blob_at(commit.tree, path)
            if all(_blob_at(p.tree, path) != mine for p in parents) or (not parents and mine is not None):
                out[path].append(commit)
    return out


def _allowed(who: str, listed: list[str]) -> bool:
    return not listed or who in listed


def _needs_review(change: PathChange, policy: Policy) -> bool:
    """Entries whose origin may not go to verified directly (or whose origin was laundered)."""
    def direct(data: bytes | None) -> bool:
        if data is None:
            return True
        try:
            origin = parse_entry(data, change.path).origin
        except MemrepoError:
            return False
        return bool(policy.origin_rule(origin).get("direct_to_verified"))

    return not (direct(change.new) and direct(change.old))


def review_findings(store: Store, base: Snapshot, head: Snapshot, changes: list[PathChange], policy: Policy,
                    severity: str = "error") -> list[Finding]:
    """review.missing for unreviewed entries and policy.changed for policy edits without an owner's record."""
    entries = {c.path: c for c in changes if path_scope_id(c.path) and _needs_review(c, policy)}
    policy_paths = [c.path for c in changes if c.path.startswith(POLICY_DIR + "/")]
    if head.commit is None or not (entries or policy_paths):
        return []
    found = introducers(store, base.commit, head.commit, list(entries) + policy_paths)
    head_tree = head.tree
    assert head_tree is not None
    out: list[Finding] = []
    for path, change in sorted(entries.items()):
        eid = path_scope_id(path)[1]  # type: ignore[index]
        final = _blob_at(head_tree, path)
        ok = [r for c in found[path] if _blob_at(c.tree, path) == final and (r := _record(c)) is not None
              and r.op == "promote" and eid in r.ids and _allowed(r.reviewer, policy.reviewers)]
        if not ok:
            origin = _origin(change)
            out.append(Finding("review.missing", severity,  # type: ignore[arg-type]
                               f"{change.change} entry {eid} (origin {origin or '?'}) has no review record",
                               path=path, entry=eid, category="origin",
                               hint="entries reach verified only through `memrepo promote ID --reviewer 'Name <email>'` "
                                    "(a promotion commit with a Reviewed-by trailer)"))
    owners = policy.policy_owners or policy.reviewers
    for path in sorted(policy_paths):
        final = _blob_at(head_tree, path)
        ok = [r for c in found[path] if _blob_at(c.tree, path) == final and (r := _record(c)) is not None
              and _allowed(r.reviewer, owners)]
        if ok:
            out.append(Finding("policy.changed", "info", f"change to policies/ reviewed by {ok[0].reviewer}", path=path,
                               category="policy"))
        else:
            out.append(Finding("policy.changed", severity,  # type: ignore[arg-type]
                               "change to policies/ needs a human policy owner's review", path=path, category="policy",
                               hint="a policy owner (policies/policy.yaml review.policy_owners) must review it: "
                                    f"{', '.join(owners) if owners else 'any person'}; on a forge, the code-owner review"))
    return out


def _origin(change: PathChange) -> str:
    for data in (change.new, change.old):
        if data is not None:
            try:
                return parse_entry(data, change.path).origin
            except MemrepoError:
                return ""
    return ""
