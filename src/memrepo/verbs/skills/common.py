"""What every skill verb shares: finding a skill in a tree, the result type, the commit pipeline.

Pipeline of a change (Hermes ``skill_manage`` semantics, git as the rollback): read the skill
on the target branch, build its folder as it will be after the change, normalise SKILL.md
(origin recorded, version bumped), run the structure checks and the security scan on that
result, and only then write one commit that touches only the changed paths. A refused
result commits nothing, so the branch never holds the bad version, and the attempt goes to
the audit log.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pygit2

from ...errors import Ambiguous, Blocked, MemrepoError, UsageError
from ...findings import Finding, escape_excerpt
from ...gitstore import TREE, Commit, FileBlob, Snapshot, format_message
from ...model.entry import ORIGINS
from ...model.skill import (
    SKILL_MD,
    SKILLS_DIR,
    Skill,
    check_skill_name,
    conform_frontmatter,
    locate,
    read_frontmatter,
    schema_problems,
    serialise_skill_md,
)
from ...policy.config import Policy
from ...policy.skillcheck import skill_base, skill_findings
from ...repo import MemRepo
from ..audit import append_audit
from ..provenance import Provenance

DEFAULT_VERSION = "1.0.0"


@dataclass
class SkillResult:
    """What a skill change did. ``commit`` is None when nothing changed."""

    name: str
    category: str | None
    action: str  # created | patched | edited | file_written | file_removed | deleted | unchanged
    branch: str
    commit: str | None
    path: str  # the skill's SKILL.md
    message: str = ""
    findings: list[Finding] = field(default_factory=list)  # warnings (a change with errors is never committed)
    files: list[str] = field(default_factory=list)  # repository paths the commit changed
    version: str | None = None
    origin: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "category": self.category, "action": self.action, "branch": self.branch,
                               "commit": self.commit, "path": self.path, "message": self.message,
                               "findings": [f.to_json() for f in self.findings], "files": self.files,
                               "version": self.version, "origin": self.origin}
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class SkillFolder:
    """One skill as stored in a tree: where it is and its files (keyed by path inside the folder)."""

    name: str
    category: str | None
    files: dict[str, FileBlob]

    @property
    def base(self) -> str:
        return skill_base(self.category, self.name)

    @property
    def path(self) -> str:
        return f"{self.base}/{SKILL_MD}"


# -- finding skills in a snapshot ------------------------------------------------------------------

def skill_keys(snap: Snapshot) -> list[tuple[str | None, str]]:
    """(category, name) of every folder holding SKILL.md, sorted (uncategorised first)."""
    out = set()
    for path, _, _ in snap.walk(SKILLS_DIR):
        loc = locate(path)
        if loc is not None and loc[2] == SKILL_MD:
            out.add((loc[0], loc[1]))
    return sorted(out, key=lambda k: (k[0] or "", k[1]))


def folder_files(snap: Snapshot, category: str | None, name: str) -> dict[str, FileBlob]:
    base = skill_base(category, name)
    return {p[len(base) + 1:]: blob for p, blob in snap.files(base).items()
            if (loc := locate(p)) is not None and (loc[0], loc[1]) == (category, name)}


def find_skill(snap: Snapshot, name: str) -> SkillFolder | None:
    """The skill called ``name`` in any category; Ambiguous if two categories hold one."""
    found = [(c, n) for c, n in _candidates(snap, name) if snap.mode(f"{skill_base(c, n)}/{SKILL_MD}") is not None]
    if not found:
        return None
    if len(found) > 1:
        places = ", ".join(skill_base(c, n) for c, n in found)
        raise Ambiguous(f"skill {name!r} exists in more than one place: {places}", where=places,
                        hint="skill names are unique across categories: delete or rename one by a reviewed change")
    category, _ = found[0]
    return SkillFolder(name, category, folder_files(snap, category, name))


def _candidates(snap: Snapshot, name: str) -> list[tuple[str | None, str]]:
    out: list[tuple[str | None, str]] = [(None, name)]
    oid = snap.oid(SKILLS_DIR)
    if oid is None:
        return out
    obj = snap.store.repo[oid]
    if not isinstance(obj, pygit2.Tree):
        return out
    for item in obj:
        if item.filemode == TREE and item.name != name:
            out.append((item.name, name))
    return out


def require_skill(snap: Snapshot, name: str, branch: str) -> SkillFolder:
    from ...errors import NotFound

    check_skill_name(name)
    folder = find_skill(snap, name)
    if folder is None:
        known = [n for _, n in skill_keys(snap)]
        raise NotFound(f"no skill named {name!r} on {branch}", where=f"{branch}:{SKILLS_DIR}/",
                       hint=("create it with `memrepo skill create NAME --file SKILL.md`" if not known else
                             f"skills on {branch}: {', '.join(known[:30])}{' ...' if len(known) > 30 else ''}"),
                       data={"skills": known})
    return folder


# -- SKILL.md normalisation: origin and version ------------------------------------------------------

def check_origin(origin: str) -> str:
    if origin not in ORIGINS:
        raise UsageError(f"unknown origin {origin!r}", where="--origin", hint=f"use one of: {', '.join(ORIGINS)}")
    return origin


def least_trusted(old: str | None, claimed: str) -> str:
    """The origin after a change: an agent cannot launder an external_tool skill (write.py's rule)."""
    from ..write import least_trusted as entry_rule

    return entry_rule(old or "agent_inferred", claimed)


def next_version(old: str | None, given: str | None) -> str:
    """First version: the one written, or 1.0.0. Later: a new version the author wrote, else the old one bumped."""
    if old is None:
        return given or DEFAULT_VERSION
    if given and given != old:
        return given
    m = re.match(r"^(.*?)(\d+)$", old)
    if m:
        return f"{m.group(1)}{int(m.group(2)) + 1}"
    return f"{old}.1"


@dataclass
class Normalised:
    data: bytes
    skill: Skill | None  # None: SKILL.md does not parse or fit the schema (the checks will say why)
    notes: list[str]


def normalise_skill_md(data: bytes, path: str, *, policy: Policy, old: Skill | None, claimed_origin: str,
                       category: str | None, bump: bool = True) -> Normalised:
    """Record ``metadata.origin`` (least trusted of old and claimed) and ``metadata.version`` (bumped
    unless ``bump`` is false: used to tell whether a change changes anything).

    A frontmatter that does not fit the schema is first folded into the specification's shape
    (top-level ``version``/``tags``/... move under ``metadata``), with a note per move. Content
    that still does not parse is returned unchanged: the checks on the result refuse it.
    """
    from ...policy.skillcheck import skill_schema

    schema = skill_schema(policy)
    try:
        meta, _, body = read_frontmatter(data, path)
    except MemrepoError:
        return Normalised(data, None, [])
    notes: list[str] = []
    if schema_problems(meta, schema):
        meta, notes = conform_frontmatter(meta)
    metadata = meta.get("metadata") if meta.get("metadata") is not None else {}
    if not isinstance(metadata, dict):
        return Normalised(data, None, notes)
    metadata = dict(metadata)
    origin = claimed_origin if old is None else least_trusted(old.origin, claimed_origin)
    given_origin = metadata.get("origin")
    if isinstance(given_origin, str) and given_origin != origin and old is None:
        notes.append(f"metadata.origin {given_origin!r} replaced by {origin!r}: the writer's origin is recorded, not the file's claim")
    given_version = metadata.get("version")
    given_version = given_version if isinstance(given_version, str) else None
    if bump or old is None:
        metadata["version"] = next_version(old.version if old else None, given_version)
    else:
        metadata["version"] = given_version or old.version or DEFAULT_VERSION
    metadata["origin"] = origin
    meta = dict(meta, metadata=metadata)
    if schema_problems(meta, schema):
        return Normalised(data, None, notes)
    skill = Skill(name=meta["name"], description=meta["description"], license=meta.get("license"),
                  compatibility=meta.get("compatibility"), metadata=metadata, allowed_tools=meta.get("allowed-tools"),
                  body=body, category=category)
    return Normalised(serialise_skill_md(skill), skill, notes)


def parse_stored(folder: SkillFolder, policy: Policy) -> Skill | None:
    from ...model.skill import parse_skill_md
    from ...policy.skillcheck import skill_schema

    blob = folder.files.get(SKILL_MD)
    if blob is None:
        return None
    try:
        return parse_skill_md(blob.data, folder.path, category=folder.category, schema=skill_schema(policy))
    except MemrepoError:
        return None


def as_bytes(content: str | bytes, where: str) -> bytes:
    if isinstance(content, bytes):
        return content
    if isinstance(content, str):
        return content.encode("utf-8", "surrogatepass")
    raise UsageError(f"content is a {type(content).__name__}, not text", where=where, hint="pass the file's text")


# -- the commit pipeline -------------------------------------------------------------------------------

@dataclass
class Plan:
    """A skill folder after a change: every file of it (``after``) and the paths that change."""

    name: str
    category: str | None
    action: str
    after: dict[str, FileBlob]  # the whole folder after the change (empty: deleted)
    changes: dict[str, FileBlob | None]  # path inside the folder -> new blob, or None (removed)
    message: str
    skill: Skill | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def base(self) -> str:
        return skill_base(self.category, self.name)


Planner = Callable[[Snapshot, Policy], Plan]
ACTION_OP = {"created": "skill-create", "patched": "skill-patch", "edited": "skill-edit", "file_written": "skill-write-file",
             "file_removed": "skill-remove-file", "deleted": "skill-delete"}


def commit_change(repo_or_path: MemRepo | str, name: str, planner: Planner, *, origin: str, prov: Provenance | None,
                  branch: str | None, op: str) -> SkillResult:
    """Plan against the branch tip, check the result, commit it (compare-and-swap, re-planned on a race)."""
    repo = MemRepo.open(repo_or_path)
    check_skill_name(name)
    check_origin(origin)
    prov = prov or Provenance()
    policy = repo.policy()
    target = branch or repo.provisional_branch
    done: list[tuple[Plan, list[Finding]]] = []

    def build(snap: Snapshot) -> Commit | None:
        done.clear()
        plan = planner(snap, policy)
        before = folder_files(snap, plan.category, plan.name)
        changed = {p: b for p, b in plan.changes.items() if before.get(p) != b}
        findings = [] if not plan.after else skill_findings(plan.after, policy, name=plan.name, category=plan.category)
        done.append((plan, findings))
        if not changed:
            return None
        blocking = [f for f in findings if f.blocking]
        if blocking:
            rules = ", ".join(sorted({f.rule for f in blocking}))
            first = blocking[0]
            where = f"{first.path}:{first.line}" if first.line else first.path
            raise Blocked(f"skill change refused by the checks on its result ({rules}): {first.message}", where=where,
                          hint=(first.hint + "; " if first.hint else "") + "nothing was committed and the attempt was "
                               "logged (memrepo audit)", data={"findings": [f.to_json() for f in blocking]})
        origin_now = plan.skill.origin if plan.skill is not None else origin
        trailers = [("Memrepo-Op", ACTION_OP.get(plan.action, op)), ("Memrepo-Skill", plan.name),
                    ("Memrepo-Origin", origin_now or origin)] + prov.trailers()
        changes = {f"{plan.base}/{p}": b for p, b in changed.items()}
        return Commit(changes, format_message(f"{ACTION_OP.get(plan.action, op)}: {plan.name}", "", trailers))

    try:
        oid, spec = repo.store.transact(target, build, author=prov.signature(repo.store))
    except Blocked as exc:
        plan = done[0][0] if done else None
        record_blocked_skill(repo, op, name, plan, exc, origin, prov, target)
        raise
    plan, findings = done[0]
    skill = plan.skill
    return SkillResult(plan.name, plan.category, plan.action if oid is not None else "unchanged", target,
                       str(oid) if oid is not None else None, f"{plan.base}/{SKILL_MD}",
                       plan.message if oid is not None else "Nothing changed; nothing was committed.",
                       [f for f in findings if not f.blocking],
                       sorted(spec.changes) if spec is not None else [],
                       skill.version if skill else None, skill.origin if skill else None, plan.extra)


def record_blocked_skill(repo: MemRepo, op: str, name: str, plan: Plan | None, exc: Blocked, origin: str,
                         prov: Provenance, branch: str) -> None:
    """One audit line per refused skill change (what, by whom, which rules, a digest of the content)."""
    import hashlib

    found = exc.data.get("findings")
    rules = sorted({str(f.get("rule")) for f in (found if isinstance(found, list) else []) if isinstance(f, dict)})
    blobs = {f"{plan.base}/{p}": b for p, b in plan.changes.items() if b is not None} if plan else {}
    first = next((str(f.get("path")) for f in (found if isinstance(found, list) else []) if isinstance(f, dict)), "")
    # the file the first refusal names (its content is what was refused), else everything the change wrote
    changed = blobs[first].data if first in blobs else b"".join(b.data for b in blobs.values())
    record = {"event": "blocked_write", "action": op, "origin": origin, "scope": "skills", "skill": name,
              "agent": prov.agent or "", "session": prov.session or "", "branch": branch, "rules": rules,
              "paths": sorted(f"{plan.base}/{p}" for p in plan.changes) if plan else [],
              "content_sha256": hashlib.sha256(changed).hexdigest(),
              "excerpt": escape_excerpt(changed.decode("utf-8", "replace"), 160)}
    try:
        append_audit(repo, record)
    except MemrepoError:
        pass  # the refusal stands even if the log cannot be written


def files_of(folder: Mapping[str, FileBlob]) -> list[str]:
    return sorted(folder, key=lambda p: (p != SKILL_MD, p))
