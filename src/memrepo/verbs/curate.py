"""curate: propose, as ONE provisional commit for review, what the memory should shed or gain.

* removal of expired entries: an entry's age is measured from the commit that last changed
  its file (its blob) in git, not from the ``updated`` text an agent can write, nor from an
  access counter nobody increments; a promotion counts as a change (a person confirmed it);
* merging of exact and near duplicates (policy ``duplicates.near_threshold``): one entry stays
  (verified before pending, then the older, then the longer) and takes the other's tags (ver + 1);
  the other is removed;
* a candidate skill drafted from every tag that at least three verified entries share (never
  written to verified: it is a pending change for a reviewer like any other).

Nothing is adopted: ``memrepo review`` lists the proposals, ``promote`` accepts them, ``reject`` drops them.
"""
from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pygit2

from ..errors import UsageError
from ..gitstore import NEWEST_FIRST, Commit, Snapshot, format_message
from ..model.entry import Entry, now_iso, serialise_entry
from ..policy.duplicates import Item, find_duplicates, threshold
from ..repo import MemRepo, StoredEntry

TTL_RE = re.compile(r"^([1-9][0-9]{0,4})([dwmy])$")
UNIT_DAYS = {"d": 1, "w": 7, "m": 30, "y": 365}
DAY = 86400
SKILL_MIN_ENTRIES = 3


def ttl_seconds(ttl: str) -> int | None:
    """``30d`` -> seconds; ``permanent`` (or anything unparsable, which `check` reports) -> None."""
    m = TTL_RE.match(ttl or "")
    return int(m.group(1)) * UNIT_DAYS[m.group(2)] * DAY if m else None


def last_changes(repo: MemRepo, head: Snapshot, paths: Iterable[str]) -> dict[str, int]:
    """For each path, the commit time of the commit that last changed its blob (walking from ``head``)."""
    want = {p: head.blob_id(p) for p in paths}
    pending = {p for p, b in want.items() if b is not None}
    out: dict[str, int] = {}
    if head.commit is None:
        return out

    def blob_at(c: pygit2.Commit, path: str) -> str | None:
        try:
            return str(c.tree[path].id)
        except KeyError:
            return None

    for commit in repo.store.repo.walk(head.commit, NEWEST_FIRST):
        if not pending:
            break
        parents = commit.parents
        if not parents:
            touched = [p for p in pending if blob_at(commit, p) == want[p]]
        else:
            changed = {d.new_file.path for d in parents[0].tree.diff_to_tree(commit.tree).deltas}
            touched = [p for p in changed & pending if blob_at(commit, p) == want[p]
                       and all(blob_at(par, p) != want[p] for par in parents)]
        for p in touched:
            out[p] = commit.commit_time
            pending.discard(p)
    return out


@dataclass
class Expiry:
    id: str
    scope: str
    path: str
    ttl: str
    last_change: int
    expires: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "scope": self.scope, "path": self.path, "ttl": self.ttl,
                "last_change": _iso(self.last_change), "expires": _iso(self.expires)}


def expiries(repo: MemRepo, snap: Snapshot) -> list[Expiry]:
    """Every entry with a finite ttl, with when it was last changed and when it expires."""
    timed = [s for s in repo.entries(snap) if s.entry is not None and ttl_seconds(s.entry.ttl)]
    changed = last_changes(repo, snap, [s.path for s in timed])
    out = []
    for s in timed:
        assert s.entry is not None
        last = changed.get(s.path)
        if last is None:
            continue
        out.append(Expiry(s.id, s.scope, s.path, s.entry.ttl, last, last + (ttl_seconds(s.entry.ttl) or 0)))
    return sorted(out, key=lambda e: (e.expires, e.id))


@dataclass
class CurateResult:
    branch: str
    commit: str | None
    expired: list[dict[str, Any]] = field(default_factory=list)
    merged: list[dict[str, Any]] = field(default_factory=list)
    skills: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"branch": self.branch, "commit": self.commit, "expired": self.expired, "merged": self.merged,
                "skills": self.skills, "proposed": len(self.expired) + len(self.merged) + len(self.skills)}


def curate(repo_or_path: MemRepo | str, *, now: float | None = None, expire: bool = True, merge: bool = True,
           skills: bool = True, dry_run: bool = False) -> CurateResult:
    """Propose expirations, merges and skill drafts as one commit on provisional (None when there is nothing)."""
    repo = MemRepo.open(repo_or_path)
    policy = repo.policy()
    clock = time.time() if now is None else now
    branch = repo.provisional_branch
    result = CurateResult(branch, None)

    def build(snap: Snapshot) -> Commit | None:
        result.expired, result.merged, result.skills = [], [], []
        changes: dict[str, bytes | None] = {}
        stored = [s for s in repo.entries(snap) if s.entry is not None]
        gone: set[str] = set()
        if expire:
            for ex in expiries(repo, snap):
                if ex.expires <= clock:
                    changes[ex.path] = None
                    gone.add(ex.id)
                    result.expired.append({**ex.to_json(), "age_days": round((clock - ex.last_change) / DAY, 1)})
        if merge:
            _merges(stored, gone, changes, result, threshold(policy.section("duplicates")))
        if skills:
            _skill_drafts(repo, snap, changes, result)
        if not changes or dry_run:
            return None
        ids = [e["id"] for e in result.expired] + [m["removed"] for m in result.merged] + [m["kept"] for m in result.merged]
        trailers = [("Memrepo-Op", "curate")] + [("Memrepo-Entry", i) for i in dict.fromkeys(ids)]
        trailers += [("Memrepo-Skill", s["name"]) for s in result.skills]
        body = "\n".join([f"expired: {e['id']} (ttl {e['ttl']}, last changed {e['last_change']})" for e in result.expired]
                         + [f"merge: {m['removed']} into {m['kept']} ({m['kind']}, {m['similarity']:.2f})" for m in result.merged]
                         + [f"skill draft: {s['name']} from {len(s['entries'])} verified entries tagged {s['tag']}"
                            for s in result.skills])
        subject = (f"curate: {len(result.expired)} expired, {len(result.merged)} merge(s), "
                   f"{len(result.skills)} skill draft(s) for review")
        return Commit(changes, format_message(subject, body, trailers))

    if dry_run:
        build(repo.store.branch_snapshot(branch))
        return result
    oid, _ = repo.store.transact(branch, build)
    result.commit = str(oid) if oid is not None else None
    if oid is not None and result.merged:
        from .conflicts import event, record_events

        record_events(repo, [event("duplicate", m["kind"], [m["kept"], m["removed"]], scope=m["scope"],
                                   similarity=m["similarity"], decision="merge proposed by curate (pending review)")
                             for m in result.merged], branch=branch, commit=str(oid))
    return result


def _merges(stored: list[StoredEntry], gone: set[str], changes: dict[str, bytes | None], result: CurateResult,
            near: float) -> None:
    by_id = {s.id: s for s in stored}
    # the one kept is listed first: verified before pending, then the older, then the longer text
    ordered = sorted((s for s in stored if s.entry is not None and s.id not in gone),
                     key=lambda s: (s.entry.verification != "verified", s.entry.updated, -len(s.entry.text), s.id))  # type: ignore[union-attr]
    items = [Item(s.id, s.scope, s.entry.text, s.path) for s in ordered if s.entry is not None]
    kept: dict[str, Entry] = {}
    for pair in find_duplicates(items, near):
        a, b = pair.a.id, pair.b.id
        if a in gone or b in gone:
            continue
        keep = kept.get(a) or by_id[a].entry
        drop = by_id[b].entry
        assert keep is not None and drop is not None
        tags = tuple(dict.fromkeys(keep.tags + drop.tags))
        if tags != keep.tags:
            keep = keep.with_(tags=tags, ver=keep.ver + (0 if a in kept else 1), updated=now_iso(), verification="pending",
                              source_type="curate")
            kept[a] = keep
            changes[by_id[a].path] = serialise_entry(keep)
        changes[by_id[b].path] = None
        gone.add(b)
        result.merged.append({"kind": pair.kind, "kept": a, "removed": b, "scope": pair.a.scope,
                              "similarity": pair.similarity, "kept_text": keep.text, "removed_text": drop.text})


def _slug(tag: str) -> str:
    return re.sub(r"-+", "-", re.sub(r"[^a-z0-9]+", "-", tag.casefold())).strip("-")[:48]


def _skill_drafts(repo: MemRepo, snap: Snapshot, changes: dict[str, bytes | None], result: CurateResult) -> None:
    from ..model.skill import NAME_RE, SKILL_MD, Skill, join_tags, serialise_skill_md

    verified = repo.store.branch_snapshot(repo.verified_branch)
    by_tag: dict[str, list[Entry]] = {}
    for s in repo.entries(verified):
        if s.entry is not None and s.entry.verification == "verified":
            for tag in dict.fromkeys(t.casefold() for t in s.entry.tags):
                by_tag.setdefault(tag, []).append(s.entry)
    existing = {p.split("/")[-2] for p, _, _ in snap.walk("skills") if p.endswith("/" + SKILL_MD)}
    for tag, entries in sorted(by_tag.items()):
        name = _slug(tag)
        if len(entries) < SKILL_MIN_ENTRIES or not name or not NAME_RE.match(name) or name in existing:
            continue
        if any(p.startswith(f"skills/{name}/") for p in changes):
            continue
        lines = "\n".join(f"- {e.text.strip()} (`{e.id}`)" for e in entries)
        body = (f"# {tag}\n\nDrafted by `memrepo curate` from {len(entries)} verified memories tagged `{tag}`.\n"
                "A reviewer turns these facts into steps before promoting this skill.\n\n"
                f"## What the team knows\n\n{lines}\n")
        skill = Skill(name=name, description=f"Draft: what the team knows about {tag}, from {len(entries)} verified "
                      f"memories. Use when working on {tag}.",
                      metadata={"version": "0.1.0", "origin": "agent_inferred", "tags": join_tags([tag]),
                                "source-entries": ", ".join(e.id for e in entries)}, body=body)
        changes[skill.path] = serialise_skill_md(skill)
        result.skills.append({"name": name, "tag": tag, "path": skill.path, "entries": [e.id for e in entries]})


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def expiring_within(repo: MemRepo, snap: Snapshot, days: float, now: float | None = None) -> list[dict[str, Any]]:
    """Entries that expire within ``days`` (already expired ones included), soonest first."""
    if days < 0:
        raise UsageError("days cannot be negative", where="--expiring-days", hint="give a number of days, e.g. 7")
    clock = time.time() if now is None else now
    return [{**e.to_json(), "expired": e.expires <= clock} for e in expiries(repo, snap) if e.expires <= clock + days * DAY]
