"""skill create / patch / edit / write_file / remove_file / delete: one commit on provisional each.

Hermes Agent's ``skill_manage`` actions on git: the version bumps on every change, the origin
recorded is the least trusted of the skill's and the writer's, and the checks run on the
skill as it will be. See :mod:`.common` for the pipeline.
"""
from __future__ import annotations

from ...errors import Ambiguous, Conflict, NotFound, UsageError
from ...gitstore import BLOB, FileBlob, Snapshot
from ...model.skill import SKILL_MD, SkillCaps, check_supporting_path, skill_dir
from ...policy.config import Policy
from ...repo import MemRepo
from ..provenance import Provenance
from .common import (
    Plan,
    SkillFolder,
    SkillResult,
    as_bytes,
    commit_change,
    find_skill,
    normalise_skill_md,
    parse_stored,
    require_skill,
)


def create(repo: MemRepo | str, name: str, content: str | bytes, *, category: str | None = None,
           origin: str = "agent_inferred", prov: Provenance | None = None, branch: str | None = None) -> SkillResult:
    """Create ``skills/[category/]name/SKILL.md`` from the whole file (frontmatter included).

    ``metadata.origin`` is set to ``origin`` (a claim inside the file is not taken) and
    ``metadata.version`` to the one written, or 1.0.0. The name must be new in every category.
    """
    skill_dir(name, category)  # checks the name and the category
    data = as_bytes(content, "SKILL.md")

    def plan(snap: Snapshot, policy: Policy) -> Plan:
        existing = find_skill(snap, name)
        if existing is not None:
            raise Conflict(f"skill {name!r} already exists", where=existing.path,
                           hint=f"change it with `memrepo skill patch {name}` or `memrepo skill edit {name}`, "
                                "or pick another name")
        path = f"{skill_dir(name, category)}/{SKILL_MD}"
        norm = normalise_skill_md(data, path, policy=policy, old=None, claimed_origin=origin, category=category)
        blob = FileBlob(BLOB, norm.data)
        return Plan(name, category, "created", {SKILL_MD: blob}, {SKILL_MD: blob},
                    _message(f"Skill {name!r} created", norm.notes), norm.skill)

    return commit_change(repo, name, plan, origin=origin, prov=prov, branch=branch, op="skill-create")


def edit(repo: MemRepo | str, name: str, content: str | bytes, *, origin: str = "agent_inferred",
         prov: Provenance | None = None, branch: str | None = None) -> SkillResult:
    """Replace the whole SKILL.md (frontmatter included); supporting files stay."""
    data = as_bytes(content, "SKILL.md")

    def plan(snap: Snapshot, policy: Policy) -> Plan:
        folder = require_skill(snap, name, _branch_label(branch))
        return _skill_md_plan(folder, policy, data, origin, "edited", f"Skill {name!r} rewritten")

    return commit_change(repo, name, plan, origin=origin, prov=prov, branch=branch, op="skill-edit")


def patch(repo: MemRepo | str, name: str, old: str, new: str, *, file: str | None = None, replace_all: bool = False,
          origin: str = "agent_inferred", prov: Provenance | None = None, branch: str | None = None) -> SkillResult:
    """Find-and-replace in SKILL.md (default) or a supporting file, tolerating whitespace,
    indentation and Unicode drift (:func:`memrepo.model.fuzzy.fuzzy_replace`).

    More than one match without ``replace_all`` raises Ambiguous whose ``data['candidates']``
    lists each place; no match raises NotFound naming the closest line.
    """
    from ...model.fuzzy import fuzzy_replace
    from ...model.text import decode_utf8

    if not isinstance(old, str) or not isinstance(new, str):
        raise UsageError("old and new must be text", where="patch", hint="pass the current text and its replacement")
    target = SKILL_MD if file in (None, "", SKILL_MD) else file

    def plan(snap: Snapshot, policy: Policy) -> Plan:
        folder = require_skill(snap, name, _branch_label(branch))
        if target != SKILL_MD:
            _check_path(target, policy)
        blob = folder.files.get(target)
        where = f"{folder.base}/{target}"
        if blob is None:
            raise NotFound(f"skill {name!r} has no file {target!r}", where=where,
                           hint=f"its files: {', '.join(sorted(folder.files))}")
        text = decode_utf8(blob.data, where)
        try:
            result = fuzzy_replace(text, old, new, replace_all=replace_all)
        except (UsageError, NotFound, Ambiguous) as exc:  # name the file (and the skill) the text was sought in
            exc.where = where if exc.where in ("", "patch") else exc.where
            exc.data.setdefault("file", target)
            if isinstance(exc, Ambiguous):
                exc.hint += " (--all / replace_all=True)"
            raise
        patched = result.content.encode("utf-8", "surrogatepass")
        what = f"{result.count} place(s) replaced in {target} (match: {result.strategy})"
        extra = {"replacements": result.count, "strategy": result.strategy, "file": target}
        if target == SKILL_MD:
            p = _skill_md_plan(folder, policy, patched, origin, "patched", f"Skill {name!r} patched: {what}")
        else:
            p = _file_plan(folder, policy, target, FileBlob(blob.mode, patched), origin, "patched",
                           f"Skill {name!r} patched: {what}")
        p.extra.update(extra)
        return p

    return commit_change(repo, name, plan, origin=origin, prov=prov, branch=branch, op="skill-patch")


def write_file(repo: MemRepo | str, name: str, path: str, content: str | bytes, *, origin: str = "agent_inferred",
               prov: Provenance | None = None, branch: str | None = None) -> SkillResult:
    """Add or replace a supporting file (``references/``, ``templates/``, ``scripts/``, ``assets/``)."""
    data = as_bytes(content, path)

    def plan(snap: Snapshot, policy: Policy) -> Plan:
        folder = require_skill(snap, name, _branch_label(branch))
        _check_path(path, policy)
        old = folder.files.get(path)
        mode = old.mode if old is not None and old.mode in (0o100644, 0o100755) else BLOB
        verb = "replaced" if old is not None else "added"
        return _file_plan(folder, policy, path, FileBlob(mode, data), origin, "file_written",
                          f"Skill {name!r}: {path} {verb}")

    return commit_change(repo, name, plan, origin=origin, prov=prov, branch=branch, op="skill-write-file")


def remove_file(repo: MemRepo | str, name: str, path: str, *, origin: str = "agent_inferred",
                prov: Provenance | None = None, branch: str | None = None) -> SkillResult:
    """Remove a supporting file (SKILL.md itself goes only with the whole skill: :func:`delete`)."""

    def plan(snap: Snapshot, policy: Policy) -> Plan:
        folder = require_skill(snap, name, _branch_label(branch))
        _check_path(path, policy)
        if path not in folder.files:
            raise NotFound(f"skill {name!r} has no file {path!r}", where=f"{folder.base}/{path}",
                           hint=f"its files: {', '.join(sorted(folder.files))}")
        return _file_plan(folder, policy, path, None, origin, "file_removed", f"Skill {name!r}: {path} removed")

    return commit_change(repo, name, plan, origin=origin, prov=prov, branch=branch, op="skill-remove-file")


def delete(repo: MemRepo | str, name: str, *, origin: str = "agent_inferred", prov: Provenance | None = None,
           branch: str | None = None) -> SkillResult:
    """Remove the whole skill folder (it stays in history, and on verified until the deletion is promoted)."""

    def plan(snap: Snapshot, policy: Policy) -> Plan:
        folder = require_skill(snap, name, _branch_label(branch))
        return Plan(name, folder.category, "deleted", {}, {p: None for p in folder.files},
                    f"Skill {name!r} deleted ({len(folder.files)} file(s))", parse_stored(folder, policy))

    return commit_change(repo, name, plan, origin=origin, prov=prov, branch=branch, op="skill-delete")


# -- helpers ---------------------------------------------------------------------------------------------

def _branch_label(branch: str | None) -> str:
    return branch or "provisional"


def _check_path(path: str, policy: Policy) -> None:
    if path == SKILL_MD:
        raise UsageError("SKILL.md is not a supporting file", where=f"file {path!r}",
                         hint="change SKILL.md with `skill edit` or `skill patch`")
    check_supporting_path(path, allowed_dirs=SkillCaps.from_policy(policy.section("skills")).allowed_dirs)


def _skill_md_plan(folder: SkillFolder, policy: Policy, data: bytes, origin: str, action: str, message: str) -> Plan:
    old = parse_stored(folder, policy)
    same = normalise_skill_md(data, folder.path, policy=policy, old=old, claimed_origin=origin,
                              category=folder.category, bump=False)
    current = folder.files[SKILL_MD]
    if same.data == current.data:
        return Plan(folder.name, folder.category, action, dict(folder.files), {}, message, same.skill)
    norm = normalise_skill_md(data, folder.path, policy=policy, old=old, claimed_origin=origin, category=folder.category)
    blob = FileBlob(current.mode if current.mode == BLOB else BLOB, norm.data)
    after = dict(folder.files, **{SKILL_MD: blob})
    return Plan(folder.name, folder.category, action, after, {SKILL_MD: blob}, _message(message, norm.notes), norm.skill)


def _file_plan(folder: SkillFolder, policy: Policy, path: str, blob: FileBlob | None, origin: str, action: str,
               message: str) -> Plan:
    """A supporting file changes; SKILL.md's version bumps and its origin is re-recorded with it."""
    if folder.files.get(path) == blob:
        return Plan(folder.name, folder.category, action, dict(folder.files), {}, message, parse_stored(folder, policy))
    skill_md = folder.files[SKILL_MD]
    old = parse_stored(folder, policy)
    norm = normalise_skill_md(skill_md.data, folder.path, policy=policy, old=old, claimed_origin=origin,
                              category=folder.category)
    changes: dict[str, FileBlob | None] = {path: blob}
    after = dict(folder.files)
    if blob is None:
        after.pop(path, None)
    else:
        after[path] = blob
    if norm.skill is not None:
        new_md = FileBlob(BLOB, norm.data)
        changes[SKILL_MD] = new_md
        after[SKILL_MD] = new_md
    return Plan(folder.name, folder.category, action, after, changes, _message(message, norm.notes), norm.skill or old)


def _message(message: str, notes: list[str]) -> str:
    return message + ("; " + "; ".join(notes) if notes else "") + "."
