"""review: what provisional has that verified lacks, with origin, author and findings."""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from ..errors import MemrepoError
from ..findings import Finding
from ..gitstore import NEWEST_FIRST, Snapshot, parse_trailers
from ..model.entry import parse_entry, path_scope_id
from ..model.text import split_frontmatter
from ..policy.checks import entry_findings
from ..policy.config import Policy
from ..repo import MemRepo
from .pending import PathChange, item_key, pending_changes


@dataclass
class ReviewItem:
    id: str
    kind: str  # "entry" | "skill" | "file"
    scope: str
    change: str
    origin: str
    author: str
    commit: str
    paths: list[str]
    text: str = ""
    old_text: str = ""
    diff: str = ""
    findings: list[Finding] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "scope": self.scope, "change": self.change, "origin": self.origin,
                "author": self.author, "commit": self.commit, "paths": self.paths, "text": self.text,
                "old_text": self.old_text, "diff": self.diff, "findings": [f.to_json() for f in self.findings],
                "blocked": any(f.blocking for f in self.findings)}


def review(repo_or_path: MemRepo | str, branch: str | None = None, *, at: str | None = None) -> list[ReviewItem]:
    """Pending changes on provisional (or a subagent branch, or a commit ``at``), grouped by entry or skill."""
    repo = MemRepo.open(repo_or_path)
    policy = repo.policy()
    base, head, changes = pending_changes(repo, branch, at)
    authors = _authors(repo, head, base)
    groups: dict[str, list[PathChange]] = {}
    for ch in changes:
        groups.setdefault(item_key(ch.path), []).append(ch)
    items = [_item(key, chs, policy, authors) for key, chs in groups.items()]
    from .skills.reviewing import fill_skill_items  # category, origin, findings and a readable diff per skill (issue 5)
    fill_skill_items(items, changes, head, policy)
    from .conflicts import review_findings  # conclusion conflicts: never promoted unnoticed (issue 7)
    review_findings(repo, head, items)
    return sorted(items, key=lambda i: (i.kind, i.scope, i.id))


def _item(key: str, chs: list[PathChange], policy: Policy, authors: dict[str, tuple[str, str]]) -> ReviewItem:
    first = chs[0]
    loc = path_scope_id(first.path)
    kind = "entry" if loc else ("skill" if first.path.startswith("skills/") else "file")
    author, commit = authors.get(key, authors.get(first.path, ("", "")))
    item = ReviewItem(key, kind, loc[0] if loc else "", _change_of(chs), "", author, commit, [c.path for c in chs])
    if kind == "entry":
        _fill_entry(item, first, policy)
    else:
        item.diff = "".join(_unified(c) for c in chs)
        if kind == "file" and first.path.startswith("policies/"):
            item.findings.append(Finding("policy.changed", "error", "change to policies/ needs a human policy owner's review",
                                         path=first.path, hint="promote it with --reviewer naming a policy owner",
                                         category="policy"))
    return item


def _change_of(chs: list[PathChange]) -> str:
    kinds = {c.change for c in chs}
    return kinds.pop() if len(kinds) == 1 else "changed"


def _fill_entry(item: ReviewItem, ch: PathChange, policy: Policy) -> None:
    for data, attr in ((ch.old, "old_text"), (ch.new, "text")):
        if data is None:
            continue
        try:
            e = parse_entry(data, ch.path)
            setattr(item, attr, e.text)
            item.origin = e.origin if attr == "text" or not item.origin else item.origin
        except MemrepoError as exc:
            if attr == "text":
                item.findings.append(Finding("entry.parse", "error", exc.what, path=ch.path, hint=exc.hint, entry=item.id))
    if ch.new is not None and not item.findings:
        e = parse_entry(ch.new, ch.path)
        try:
            _, _, body_line = split_frontmatter(ch.new.decode("utf-8"), ch.path)
        except (MemrepoError, UnicodeDecodeError):
            body_line = 0
        item.findings.extend(entry_findings(e, policy, ch.path, body_line))
    item.diff = _unified(ch)


def _unified(ch: PathChange) -> str:
    def lines(data: bytes | None) -> list[str]:
        if data is None:
            return []
        return data.decode("utf-8", "replace").splitlines(keepends=True)

    a = f"a/{ch.path}" if ch.old is not None else "/dev/null"
    b = f"b/{ch.path}" if ch.new is not None else "/dev/null"
    out = "".join(difflib.unified_diff(lines(ch.old), lines(ch.new), a, b))
    return out if out.endswith("\n") or not out else out + "\n"


def _authors(repo: MemRepo, head: Snapshot, base: Snapshot) -> dict[str, tuple[str, str]]:
    """Latest pending commit touching each entry id (from Memrepo-Entry trailers) or path."""
    out: dict[str, tuple[str, str]] = {}
    if head.commit is None:
        return out
    walker = repo.store.repo.walk(head.commit, NEWEST_FIRST)
    if base.commit is not None:
        walker.hide(base.commit)
    for commit in walker:
        who = f"{commit.author.name} <{commit.author.email}>"
        for key in parse_trailers(commit.message).get("Memrepo-Entry", []) + parse_trailers(commit.message).get("Memrepo-Skill", []):
            out.setdefault(key, (who, str(commit.id)))
        if len(commit.parents) == 1 and not parse_trailers(commit.message).get("Memrepo-Entry"):
            for d in commit.parents[0].tree.diff_to_tree(commit.tree).deltas:
                out.setdefault(d.new_file.path, (who, str(commit.id)))
                out.setdefault(item_key(d.new_file.path), (who, str(commit.id)))
    return out
