"""Findings for skill folders: structure (model.skill.validate_skill) plus the security scan.

A skill folder is ``skills/[category/]<name>/`` holding ``SKILL.md``. Every check of a
skill runs on the whole folder as it is after a change (never on the change alone), so
the same findings come out at write time, in ``memrepo check``, in CI and server-side.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ..errors import MemrepoError
from ..findings import Finding
from ..gitstore import FileBlob
from ..model.skill import SKILL_MD, SKILLS_DIR, default_skill_schema, locate, validate_skill
from .config import Policy

SKILLS_README = f"{SKILLS_DIR}/README.md"
# Under the external_tool integrity guard, scan warnings block, except these: a skill body
# is an instruction by design (score.directive), and structure warnings (a binary asset, an
# executable bit) say nothing about intent.
_GUARD_EXEMPT_RULES = frozenset({"score.directive"})
_GUARD_EXEMPT_CATEGORIES = frozenset({"skill", "skill-structure"})

SkillKey = tuple["str | None", str]  # (category, name)


def skill_base(category: str | None, name: str) -> str:
    """The folder path of a skill (no name checks: the findings say what is wrong)."""
    return f"{SKILLS_DIR}/{category}/{name}" if category else f"{SKILLS_DIR}/{name}"


def group_skill_files(paths: Iterable[str]) -> dict[SkillKey, list[str]]:
    """Paths under skills/ grouped by the skill folder ``locate`` puts them in."""
    out: dict[SkillKey, list[str]] = {}
    for path in paths:
        loc = locate(path)
        if loc is not None:
            out.setdefault((loc[0], loc[1]), []).append(path)
    return out


def skill_findings(folder: Mapping[str, FileBlob], policy: Policy, *, name: str, category: str | None) -> list[Finding]:
    """Structure + security findings for one skill folder (``folder`` keyed by path inside it)."""
    base = skill_base(category, name)
    from .fastschema import fast_validator

    schema = skill_schema(policy)
    structure = validate_skill({p: (b.mode, b.data) for p, b in folder.items()}, folder_name=name,
                               policy_skills=policy.section("skills"), category=category, schema=schema,
                               is_valid=policy.fast_valid("skill") if schema is not None else fast_validator(default_skill_schema()))
    out = list(structure)
    seen = {(f.rule, f.path) for f in out}
    flagged_modes = {f.path for f in out if f.rule in ("skill.symlink", "skill.submodule")}
    guard = bool(policy.origin_rule(_origin_of(folder)).get("integrity_guard"))
    from ..detect import SkillFile

    scanned = policy.scanner().scan_skill({p: SkillFile(b.mode, b.data) for p, b in folder.items()})
    for f in scanned:
        path = f"{base}/{f.path}" if f.path else base
        if path in flagged_modes and f.rule.startswith(("skill.symlink", "skill.submodule")):
            continue  # the structure check already refuses the link
        if (f.rule, path) in seen:
            continue
        seen.add((f.rule, path))
        f = replace(f, path=path, entry=f.entry or name)
        if guard and f.severity == "warning" and f.rule not in _GUARD_EXEMPT_RULES \
                and f.category not in _GUARD_EXEMPT_CATEGORIES:
            f = replace(f, severity="error", hint=(f.hint + " " if f.hint else "") + "(integrity guard: external_tool skill)")
        out.append(f)
    return out


def skill_schema(policy: Policy) -> dict[str, Any] | None:
    """The judging policy's skill schema; None (memrepo's default) when the policy has none."""
    try:
        return policy.schema("skill")
    except MemrepoError:
        return None


def _origin_of(folder: Mapping[str, FileBlob]) -> str:
    """metadata.origin of SKILL.md, or external_tool when it cannot be read (the strictest reading)."""
    blob = folder.get(SKILL_MD)
    if blob is None:
        return "external_tool"
    from ..model.skill import read_frontmatter

    try:
        meta, _, _ = read_frontmatter(blob.data, SKILL_MD)
    except MemrepoError:
        return "external_tool"
    metadata = meta.get("metadata")
    origin = metadata.get("origin") if isinstance(metadata, dict) else None
    return origin if isinstance(origin, str) and origin else "agent_inferred"


def skill_folder_findings(files: Mapping[str, FileBlob], policy: Policy, targets: set[str]) -> list[Finding]:
    """Findings for every skill folder holding a touched path, and for touched strays under skills/.

    ``files`` is the whole tree after the change (path -> FileBlob); ``targets`` the touched
    paths. A touched path whose skill folder no longer exists (a deleted skill) gives nothing.
    """
    touched = [p for p in targets if p.startswith(SKILLS_DIR + "/") and p != SKILLS_README]
    if not touched:
        return []
    groups = group_skill_files(p for p in files if p.startswith(SKILLS_DIR + "/"))
    out: list[Finding] = []
    done: set[SkillKey] = set()
    for path in sorted(touched):
        loc = locate(path)
        if loc is None:
            if path in files:
                out.append(_stray(path, "a file directly under skills/ is not inside a skill folder"))
            continue
        key = (loc[0], loc[1])
        if key in done:
            continue
        done.add(key)
        members = groups.get(key, [])
        if not members:
            continue  # the skill was deleted
        base = skill_base(*key)
        folder = {p[len(base) + 1:]: files[p] for p in members}
        if SKILL_MD not in folder:
            out.extend(_strays(folder, base, touched))
            continue
        out.extend(skill_findings(folder, policy, name=key[1], category=key[0]))
        out.extend(_duplicate_name(key, groups))
    return out


def _strays(folder: Mapping[str, FileBlob], base: str, touched: list[str]) -> list[Finding]:
    """Files in a folder without SKILL.md: a category's README.md is fine, anything else is a stray."""
    out = []
    for rel in sorted(folder):
        path = f"{base}/{rel}"
        if rel == "README.md" or path not in touched:
            continue
        out.append(_stray(path, f"{base}/ has no SKILL.md, so this file is not inside a skill folder"))
    return out


def _stray(path: str, message: str) -> Finding:
    return Finding("skill.stray-file", "error", message, path=path, category="skill",
                   hint="skills live in skills/[category/]<name>/ beside a SKILL.md; move the file into one or remove it")


def _duplicate_name(key: SkillKey, groups: Mapping[SkillKey, list[str]]) -> list[Finding]:
    """Skills are addressed by name, so a name may exist in only one category."""
    others = sorted(skill_base(c, n) for (c, n), members in groups.items()
                    if n == key[1] and (c, n) != key and any(m.endswith("/" + SKILL_MD) for m in members))
    if not others:
        return []
    return [Finding("skill.duplicate-name", "error", f"skill {key[1]!r} also exists at {', '.join(others)}",
                    path=f"{skill_base(*key)}/{SKILL_MD}", category="skill", entry=key[1],
                    hint="skill names are unique across categories; rename or delete one")]
