"""The four conflict kinds and duplicate detections, where they arise, recorded on the audit ref.

* fact overwrite: ``replace`` of an entry with a new value (ver + 1, old version kept in
  history, pending until a person promotes it); ``remember --id`` on an existing id is refused.
* tag conflict: a write that shares a tag with an entry and contradicts it (a warning; logged).
* conclusion conflict: a write to a scope other than ``user`` that contradicts the user
  profile; logged, and an error finding in ``memrepo review`` so it cannot be promoted until
  a person updates the profile or rejects the write.
* origin conflict: a write aimed at verified from an origin the policy does not let in
  directly (external_tool never): forced to provisional and logged.

Every event is one JSON line on ``refs/memrepo/audit`` (see :mod:`.audit`); the governance
logs (``memrepo audit --kind ...``, ``memrepo report``) are views of those lines and of git.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..errors import MemrepoError
from ..findings import Finding, escape_excerpt
from ..gitstore import Snapshot
from ..model.entry import Entry
from ..policy.conflicts import contradiction, shares_tag
from ..policy.duplicates import Item, near_matches, threshold
from ..repo import MemRepo
from .audit import append_audit

USER_SCOPE = "user"


def event(kind: str, name: str, ids: Sequence[str], *, scope: str = "", detail: str = "", decision: str = "",
          old: str = "", new: str = "", **more: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {"event": kind, "kind": name, "ids": list(ids), "scope": scope, "detail": detail,
                           "decision": decision, "rules": [f"{kind}.{name}"]}
    if old:
        rec["old"] = escape_excerpt(old, 160)
    if new:
        rec["new"] = escape_excerpt(new, 160)
    rec.update(more)
    return rec


def write_warnings(plan: Any, entry: Entry) -> list[Finding]:
    """Near duplicates, tag and conclusion conflicts for an entry being written (warnings; events on ``plan``).

    Runs over small scopes only (those not fanned out): a fanned-out recall scope of 100k
    entries is covered by `memrepo check` and `memrepo curate`, not on every write.
    """
    policy = plan.policy
    out: list[Finding] = []
    spec = policy.scopes.get(entry.scope)
    path = policy.entry_path(entry.scope, entry.id)
    if spec is not None and not spec.fanout:
        others = [e for e in plan.scope_entries(entry.scope).values() if e.id != entry.id]
        items = [Item(e.id, e.scope, e.text) for e in others]
        for near, sim in near_matches(entry.text, entry.scope, items, threshold(policy.section("duplicates")))[:3]:
            out.append(Finding("duplicate.near", "warning", f"near duplicate of {near.id} (similarity {sim:.2f}); "
                               "written anyway, for a person to merge", path=path, entry=entry.id, category="duplicate",
                               hint="run `memrepo curate` to propose the merge, or `memrepo forget` one of them"))
            plan.events.append(event("duplicate", "near", [entry.id, near.id], scope=entry.scope, similarity=sim,
                                     decision="written; flagged for merge", new=entry.text, old=near.text))
        for other in others:
            common = shares_tag(entry.tags, other.tags)
            found = contradiction(entry.text, other.text) if common else None
            if found is not None:
                why = str(found)
                out.append(Finding("conflict.tag", "warning", f"contradicts {other.id} under tag "
                                   f"{', '.join(sorted(common))} ({why})", path=path, entry=entry.id, category="conflict",
                                   hint="a person decides which is right: promote one, reject or replace the other"))
                plan.events.append(event("conflict", "tag", [entry.id, other.id], scope=entry.scope, detail=str(why),
                                         decision="pending: a person decides", new=entry.text, old=other.text,
                                         tags=sorted(common)))
    if entry.scope != USER_SCOPE and USER_SCOPE in policy.scopes:
        for user_entry, reason in conclusion_conflicts(entry, plan.scope_entries(USER_SCOPE).values()):
            out.append(_conclusion_finding(entry, user_entry, reason, path))
            plan.events.append(event("conflict", "conclusion", [entry.id, user_entry.id], scope=entry.scope, detail=reason,
                                     decision="not adopted: pending until a person decides", new=entry.text,
                                     old=user_entry.text))
    return out


def conclusion_conflicts(entry: Entry, user_entries: Iterable[Entry]) -> list[tuple[Entry, str]]:
    out = []
    for other in user_entries:
        why = contradiction(entry.text, other.text)
        if why is not None:
            out.append((other, str(why)))
    return out


def _conclusion_finding(entry: Entry, other: Entry, why: str, path: str, severity: str = "warning") -> Finding:
    return Finding("conflict.conclusion", severity,  # type: ignore[arg-type]
                   f"contradicts the user profile entry {other.id} ({why}); never adopted automatically",
                   path=path, entry=entry.id, category="conflict",
                   hint="if the user's view changed, update the profile (`memrepo replace "
                        f"{other.id} ... --scope user`); otherwise reject this entry")


def fact_overwrite_event(old: Entry, new: Entry) -> dict[str, Any]:
    return event("conflict", "fact_overwrite", [old.id], scope=old.scope, old=old.text, new=new.text,
                 detail=f"ver {old.ver} -> {new.ver}; the old version stays in history",
                 decision="pending: promote confirms, reject keeps the old value", ver=new.ver)


def origin_event(op: Any, target: str, forced_to: str) -> dict[str, Any]:
    return event("conflict", "origin", [getattr(op, "id", None) or getattr(op, "old", "") or "(new)"],
                 scope=getattr(op, "scope", ""), origin=getattr(op, "origin", ""), new=getattr(op, "text", ""),
                 detail=f"{getattr(op, 'origin', '')} may not write to {target} directly",
                 decision=f"blocked from {target}; forced to {forced_to}")


def record_events(repo: MemRepo, events: Sequence[dict[str, Any]], *, prov: Any = None, branch: str = "",
                  commit: str | None = None) -> None:
    """Append events to the audit ref; a failure to log never undoes the write that was made."""
    for rec in events:
        rec = dict(rec)
        rec.setdefault("branch", branch)
        rec.setdefault("commit", commit or "")
        rec.setdefault("agent", getattr(prov, "agent", None) or "")
        rec.setdefault("task", getattr(prov, "task", None) or "")
        try:
            append_audit(repo, rec)
        except MemrepoError:
            pass


def review_findings(repo: MemRepo, head: Snapshot, items: Sequence[Any]) -> None:
    """Add conclusion-conflict errors to pending entries in ``memrepo review`` (computed afresh,
    against the user profile as it stands on the reviewed branch, pending updates included)."""
    pending = [it for it in items if getattr(it, "kind", "") == "entry" and it.scope != USER_SCOPE and it.text]
    if not pending:
        return
    user = [s.entry for s in repo.entries(head, USER_SCOPE) if s.entry is not None]
    if not user:
        return
    for it in pending:
        probe = Entry(id=it.id, text=it.text, scope=it.scope)
        for other, why in conclusion_conflicts(probe, user):
            it.findings.append(_conclusion_finding(probe, other, why, it.paths[0] if it.paths else "", "error"))
