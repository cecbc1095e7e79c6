"""Subagent isolation: a declared scope per subagent, its own branch, a validator at merge.

A manifest ``policies/scopes/<name>.yaml`` (``read``, ``write``, ``skills``) declares what a
subagent may see and write. It lives under policies/ on purpose: it is reviewed like policy
(a policy owner promotes it) and only the copy on verified counts. A subagent inherits
nothing: every list defaults to empty.

:func:`open_scoped` returns a :class:`ScopedRepo`: it reads only the declared memory scopes
and skills, and writes only to its own branch ``subagents/<name>`` (see :func:`branch_of`). :func:`merge_scope` brings that
branch's changes onto provisional after a validator pass (paths within the declared write
scopes, the content scan and the tree checks of verified's policy); anything that fails stops
the whole merge and is logged. Merged writes are then pending like any other: nothing a
subagent writes reaches shared memory without a person's review.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import Blocked, Conflict, MemrepoError, NotFound, UsageError
from ..findings import Finding
from ..gitstore import Commit, FileBlob, Snapshot, format_message
from ..model.entry import path_scope_id
from ..model.safeyaml import dump_yaml, load_yaml
from ..policy.files import tree_findings
from ..repo import MemRepo, StoredEntry
from .audit import append_audit
from .pending import diff_paths, sync_base
from .provenance import Provenance
from .write import Op, WriteResult, apply_ops

SCOPES_DIR = "policies/scopes"
NAME_RE = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")


class ScopeDenied(MemrepoError):
    """A scoped subagent asked for something its manifest does not declare."""

    code = "scope_denied"


@dataclass(frozen=True)
class Manifest:
    name: str
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    description: str = ""

    def to_yaml(self) -> bytes:
        data: dict[str, Any] = {"name": self.name, "description": self.description, "read": list(self.read),
                                "write": list(self.write), "skills": list(self.skills)}
        return dump_yaml(data).encode("utf-8")

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "read": list(self.read), "write": list(self.write),
                "skills": list(self.skills), "path": manifest_path(self.name)}


def manifest_path(name: str) -> str:
    return f"{SCOPES_DIR}/{check_name(name)}.yaml"


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise UsageError(f"invalid subagent scope name {name!r}", where="scope NAME",
                         hint="1-32 characters of a-z, 0-9, '-' or '_', starting with a letter")
    return name


def parse_manifest(data: bytes, name: str) -> Manifest:
    where = manifest_path(name)
    raw = load_yaml(data.decode("utf-8", "replace"), where)
    if not isinstance(raw, dict):
        raise UsageError("scope manifest is not a mapping", where=where, hint="write read:, write:, skills: lists")

    def names(key: str) -> tuple[str, ...]:
        value = raw.get(key) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise UsageError(f"{key} must be a list of names", where=where, hint=f"e.g. {key}: [knowledge]")
        return tuple(value)

    if raw.get("name", name) != name:
        raise UsageError(f"manifest names {raw.get('name')!r}, not {name!r}", where=where, hint="make name match the file name")
    return Manifest(name, names("read"), names("write"), names("skills"), str(raw.get("description") or ""))


def _names(values: Sequence[str] | str | None) -> tuple[str, ...]:
    if values is None:
        return ()
    if isinstance(values, str):
        values = values.split(",")
    return tuple(dict.fromkeys(v.strip() for v in values if v and v.strip()))


def create_scope(repo_or_path: MemRepo | str, name: str, *, read: Sequence[str] | str | None = None,
                 write: Sequence[str] | str | None = None, skills: Sequence[str] | str | None = None,
                 description: str = "", reviewer: str | None = None) -> dict[str, Any]:
    """Write a manifest: pending on provisional (a policy owner promotes it), or, with ``reviewer``
    (a person acting now), straight onto verified with a Reviewed-by trailer."""
    repo = MemRepo.open(repo_or_path)
    policy = repo.policy()
    manifest = Manifest(check_name(name), _names(read), _names(write), _names(skills), description)
    unknown = [s for s in manifest.read + manifest.write if s not in policy.scopes]
    if unknown:
        raise UsageError(f"unknown memory scope(s): {', '.join(unknown)}", where="--read/--write",
                         hint=f"declared scopes: {', '.join(policy.scopes)}")
    for skill in manifest.skills:
        from ..model.skill import check_skill_name

        check_skill_name(skill, where="--skills")
    path = manifest_path(name)
    trailers = [("Memrepo-Op", "scope-create"), ("Memrepo-Scope", name)]
    if reviewer:
        from .promote import parse_reviewer, sync_provisional

        sig = parse_reviewer(reviewer)
        who = f"{sig.name} <{sig.email}>"
        owners = policy.policy_owners or policy.reviewers
        if owners and who not in owners:
            raise Blocked(f"{who} may not change policies/ (scope manifests are policy)", where="policies/policy.yaml:review",
                          hint=f"policy owners: {', '.join(owners)}")
        msg = format_message(f"scope create: {name}", "", trailers + [("Reviewed-by", who)])
        oid, _ = repo.store.transact(repo.verified_branch, lambda s: Commit({path: manifest.to_yaml()}, msg), author=sig)
        sync_provisional(repo)
        branch = repo.verified_branch
    else:
        msg = format_message(f"scope create: {name} (pending review)", "", trailers)
        oid, _ = repo.store.transact(repo.provisional_branch, lambda s: Commit({path: manifest.to_yaml()}, msg))
        branch = repo.provisional_branch
    return {**manifest.to_json(), "branch": branch, "commit": str(oid),
            "pending": branch != repo.verified_branch,
            "next": "" if branch != repo.provisional_branch else f"memrepo promote {path} --reviewer 'Name <email>'"}


def load_manifest(repo: MemRepo, name: str) -> Manifest:
    """The manifest as it stands on verified (a pending one does not count)."""
    path = manifest_path(name)
    data = repo.store.branch_snapshot(repo.verified_branch).read(path)
    if data is None:
        pending = repo.store.branch_snapshot(repo.provisional_branch).read(path) is not None
        raise NotFound(f"no subagent scope {name!r} on {repo.verified_branch}", where=path,
                       hint=(f"it is pending review: `memrepo promote {path} --reviewer 'Name <email>'`" if pending
                             else f"create it: `memrepo scope create {name} --read ... --write ... --skills ...`"))
    return parse_manifest(data, name)


def list_scopes(repo_or_path: MemRepo | str) -> list[dict[str, Any]]:
    repo = MemRepo.open(repo_or_path)
    snap = repo.store.branch_snapshot(repo.verified_branch)
    out = []
    for path, oid, _ in sorted(snap.walk(SCOPES_DIR)):
        if path.endswith(".yaml"):
            name = path.rsplit("/", 1)[-1][:-5]
            try:
                m = parse_manifest(repo.store.repo[oid].data, name)  # type: ignore[attr-defined]
            except MemrepoError:
                continue
            out.append({**m.to_json(), "branch": branch_of(repo, name)})
    return out


FALLBACK_PREFIX = "subagents/"


def branch_of(repo: MemRepo, name: str) -> str:
    """The subagent's branch: policy ``branches.subagent_prefix`` + name.

    Git cannot hold ``provisional/<name>`` beside a branch ``provisional`` (a ref is a file, so it
    cannot also be a folder), so a prefix naming an existing branch becomes ``subagents/``.
    """
    prefix = repo.policy().subagent_prefix
    if prefix.endswith("/") and prefix[:-1] in (repo.provisional_branch, repo.verified_branch):
        prefix = FALLBACK_PREFIX
    return f"{prefix}{check_name(name)}"


@dataclass
class ScopedRepo:
    """A subagent's handle: sees only its declared scopes and skills, writes only to its branch."""

    repo: MemRepo
    manifest: Manifest
    branch: str
    _skills: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.manifest.name

    def _ensure_branch(self) -> None:
        if self.repo.store.tip(self.branch) is None:
            vtip = self.repo.store.require_tip(self.repo.verified_branch)
            self.repo.store.cas_ref(self.branch, vtip, None, f"memrepo scope: {self.name}")

    def _can(self, kind: str, scope: str) -> None:
        allowed = self.manifest.read if kind == "read" else self.manifest.write
        if scope not in allowed:
            raise ScopeDenied(f"subagent {self.name!r} may not {kind} scope {scope!r}", where=manifest_path(self.name),
                              hint=f"declared {kind} scopes: {', '.join(allowed) or '(none)'}; the lead declares more "
                                   "with a reviewed `memrepo scope create`")

    # -- reading ---------------------------------------------------------------------------
    def scopes(self) -> tuple[str, ...]:
        return self.manifest.read

    def entries(self, scope: str) -> list[StoredEntry]:
        """Entries of a readable scope, as on the subagent's branch (verified + its own writes)."""
        self._can("read", scope)
        snap = self.repo.store.branch_snapshot(self.branch)
        if snap.commit is None:
            snap = self.repo.store.branch_snapshot(self.repo.verified_branch)
        return [e for e in self.repo.entries(snap, scope) if e.entry is not None]

    def render(self) -> str:
        """The frozen prompt snapshot (from verified) restricted to the readable scopes."""
        from .render import Rendered, render

        full = render(self.repo)
        return Rendered(full.commit, [b for b in full.blocks if b.scope in self.manifest.read]).text()

    def skills(self) -> list[dict[str, str]]:
        """Name and description of each declared skill present on verified (progressive disclosure)."""
        return [{"name": n, "description": s.description} for n, s in sorted(self._load_skills().items())]

    def skill(self, name: str) -> str:
        if name not in self.manifest.skills:
            raise ScopeDenied(f"subagent {self.name!r} may not load skill {name!r}", where=manifest_path(self.name),
                              hint=f"declared skills: {', '.join(self.manifest.skills) or '(none)'}")
        skills = self._load_skills()
        if name not in skills:
            raise NotFound(f"skill {name!r} is not on {self.repo.verified_branch}", where=f"skills/{name}",
                           hint="promote it first")
        return str(skills[name].body)

    def _load_skills(self) -> dict[str, Any]:
        if not self._skills:
            from ..model.skill import SKILL_MD, parse_skill_md

            snap = self.repo.store.branch_snapshot(self.repo.verified_branch)
            for path, oid, _ in snap.walk("skills"):
                if path.endswith("/" + SKILL_MD) and path.split("/")[-2] in self.manifest.skills:
                    try:
                        self._skills[path.split("/")[-2]] = parse_skill_md(self.repo.store.repo[oid].data, path)  # type: ignore[attr-defined]
                    except MemrepoError:
                        continue
        return self._skills

    # -- writing (only to the subagent's own branch) -----------------------------------------------
    def _prov(self, prov: Provenance | None) -> Provenance:
        base = prov or Provenance()
        return Provenance(agent=self.name, session=base.session, task=base.task, tool_calls=base.tool_calls,
                          tokens=base.tokens, cost=base.cost)

    @staticmethod
    def _origin(origin: str) -> str:
        return "agent_inferred" if origin == "verified_manual" else origin  # a subagent cannot claim the user confirmed

    def remember(self, text: str, *, scope: str, tags: Sequence[str] = (), kind: str = "fact", ttl: str = "permanent",
                 origin: str = "agent_inferred", id: str | None = None, prov: Provenance | None = None) -> WriteResult:
        self._can("write", scope)
        self._ensure_branch()
        op = Op("add", scope=scope, text=text, tags=tags, kind=kind, ttl=ttl, origin=self._origin(origin), id=id)
        return apply_ops(self.repo, [op], prov=self._prov(prov), branch=self.branch)

    def replace(self, old: str, new: str, *, scope: str, origin: str = "agent_inferred",
                prov: Provenance | None = None) -> WriteResult:
        self._can("write", scope)
        self._ensure_branch()
        return apply_ops(self.repo, [Op("replace", scope=scope, old=old, text=new, origin=self._origin(origin))],
                         prov=self._prov(prov), branch=self.branch)

    def forget(self, old: str, *, scope: str, prov: Provenance | None = None) -> WriteResult:
        self._can("write", scope)
        self._ensure_branch()
        return apply_ops(self.repo, [Op("remove", scope=scope, old=old)], prov=self._prov(prov), branch=self.branch)


def open_scoped(repo_or_path: MemRepo | str, name: str) -> ScopedRepo:
    """Open the repository as subagent ``name`` (its manifest must be on verified)."""
    repo = MemRepo.open(repo_or_path)
    return ScopedRepo(repo, load_manifest(repo, name), branch_of(repo, name))


def validate_scope(repo: MemRepo, manifest: Manifest, base: Snapshot, head: Snapshot) -> tuple[list[str], list[Finding]]:
    """The validator pass: (changed paths, findings) for a subagent branch against its base."""
    changed = [c.path for c in diff_paths(base, head)]
    findings: list[Finding] = []
    for path in changed:
        loc = path_scope_id(path)
        if loc is None or loc[0] not in manifest.write:
            findings.append(Finding("scope.outside", "error", f"subagent {manifest.name!r} changed a path outside its "
                                    f"declared write scopes ({', '.join(manifest.write) or 'none'})", path=path,
                                    hint="only memories/<declared scope>/ may change on a subagent branch",
                                    category="isolation", entry=loc[1] if loc else ""))
    if changed:
        findings += tree_findings(head.files(), repo.policy(), only=changed)
    return changed, findings


def merge_scope(repo_or_path: MemRepo | str, name: str) -> dict[str, Any]:
    """Bring a subagent branch's changes onto provisional after the validator pass; reset the branch."""
    repo = MemRepo.open(repo_or_path)
    manifest = load_manifest(repo, name)
    branch = branch_of(repo, name)
    head = repo.store.branch_snapshot(branch)
    if head.commit is None:
        return {"scope": name, "branch": branch, "commit": None, "ids": [], "message": "nothing to merge"}
    base = sync_base(repo, head)
    changed, findings = validate_scope(repo, manifest, base, head)
    blocking = [f for f in findings if f.blocking]
    ids = sorted({loc[1] if (loc := path_scope_id(p)) else p for p in changed})
    if blocking:
        try:
            append_audit(repo, {"event": "scope_merge_blocked", "scope": name, "branch": branch, "ids": ids,
                                "agent": name, "rules": sorted({f.rule for f in blocking}),
                                "excerpt": "; ".join(f"{f.path}: {f.message}" for f in blocking)[:300]})
        except MemrepoError:
            pass
        bad = sorted({f.entry or f.path for f in blocking})
        raise Blocked(f"subagent {name!r} branch failed the validator ({', '.join(sorted({f.rule for f in blocking}))}); "
                      "nothing was merged", where=branch,
                      hint=f"drop the offending change(s) with `memrepo reject {' '.join(bad)} --branch {branch} "
                           "--reason ...`, then merge again", data={"findings": [f.to_json() for f in blocking]})
    if not changed:
        return {"scope": name, "branch": branch, "commit": None, "ids": [], "message": "nothing to merge"}
    changes: dict[str, bytes | FileBlob | None] = {}
    expect: dict[str, bytes | None] = {}
    for ch in diff_paths(base, head):
        changes[ch.path] = FileBlob(ch.new_mode or 0o100644, ch.new) if ch.new is not None else None
        expect[ch.path] = ch.old

    def build(snap: Snapshot) -> Commit:
        clash = [p for p, old in expect.items() if snap.read(p) != old and snap.read(p) != _data(changes[p])]
        if clash:
            raise Conflict(f"provisional changed {', '.join(clash)} since the subagent branched", where=branch,
                           hint="review and settle the pending change on provisional first, then merge again")
        trailers = [("Memrepo-Op", "scope-merge"), ("Memrepo-Scope", name), ("Memrepo-Agent", name),
                    ("Memrepo-Source-Commit", str(head.commit))] + [("Memrepo-Entry", i) for i in ids]
        return Commit(changes, format_message(f"scope merge: {name} ({len(ids)} change(s), validated)", "", trailers))

    oid, _ = repo.store.transact(repo.provisional_branch, build, author=Provenance(agent=name).signature(repo.store))
    vtip = repo.store.require_tip(repo.verified_branch)
    repo.store.set_ref(branch, vtip, head.commit, f"memrepo scope merge: {name}")
    try:
        append_audit(repo, {"event": "scope_merge", "scope": name, "branch": branch, "ids": ids, "agent": name,
                            "commit": str(oid), "rules": []})
    except MemrepoError:
        pass
    return {"scope": name, "branch": branch, "commit": str(oid), "ids": ids,
            "message": f"{len(ids)} change(s) merged into {repo.provisional_branch}, pending review"}


def _data(value: bytes | FileBlob | None) -> bytes | None:
    return value.data if isinstance(value, FileBlob) else value
