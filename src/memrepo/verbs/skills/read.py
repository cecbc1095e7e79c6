"""skill view / list / index: reading skills, and the progressive-disclosure index for a prompt."""
from __future__ import annotations

import base64
from typing import Any

from ...errors import NotFound, UsageError
from ...gitstore import Snapshot
from ...model.skill import SKILL_MD, SkillCaps, check_skill_name, check_supporting_path, index_description
from ...repo import MemRepo
from .common import SkillFolder, files_of, find_skill, folder_files, parse_stored, skill_keys

INDEX_HEADER = "Available skills (load one with skill_view before following it):"


def view(repo_or_path: MemRepo | str, name: str, file: str | None = None, *, branch: str | None = None) -> dict[str, Any]:
    """A skill's SKILL.md (or one supporting file) in full: Hermes ``skill_view``.

    With no ``branch``: the verified version when there is one (``"verified": true``), else the
    pending one on provisional (``"verified": false``). ``"pending": true`` says provisional holds
    a change to the skill that is not reviewed yet. A binary file comes back base64-encoded
    (``"encoding": "base64"``).
    """
    repo = MemRepo.open(repo_or_path)
    check_skill_name(name)
    policy = repo.policy()
    snap, label, folder = _locate_for_reading(repo, name, branch)
    rel = SKILL_MD if file in (None, "", SKILL_MD) else file
    if rel != SKILL_MD:
        check_supporting_path(rel, allowed_dirs=SkillCaps.from_policy(policy.section("skills")).allowed_dirs)
    blob = folder.files.get(rel)
    if blob is None:
        raise NotFound(f"skill {name!r} has no file {rel!r}", where=f"{label}:{folder.base}/{rel}",
                       hint=f"its files: {', '.join(files_of(folder.files))}")
    skill = parse_stored(folder, policy)
    out: dict[str, Any] = {"name": name, "category": folder.category, "path": f"{folder.base}/{rel}", "file": rel,
                           "branch": label, "commit": str(snap.commit) if snap.commit else None,
                           "verified": label == repo.verified_branch, "pending": _pending(repo, name, folder, label),
                           "description": skill.description if skill else "",
                           "version": skill.version if skill else None, "origin": skill.origin if skill else None,
                           "files": files_of(folder.files)}
    try:
        out["content"], out["encoding"] = blob.data.decode("utf-8"), "utf-8"
        if "\x00" in out["content"]:
            raise UnicodeDecodeError("utf-8", b"", 0, 1, "NUL")
    except UnicodeDecodeError:
        out["content"], out["encoding"] = base64.b64encode(blob.data).decode("ascii"), "base64"
    return out


def _locate_for_reading(repo: MemRepo, name: str, branch: str | None) -> tuple[Snapshot, str, SkillFolder]:
    order = [branch] if branch else [repo.verified_branch, repo.provisional_branch]
    for label in order:
        snap = repo.store.branch_snapshot(label)
        folder = find_skill(snap, name)
        if folder is not None:
            return snap, label, folder
    raise NotFound(f"no skill named {name!r} on {' or '.join(order)}", where=f"{SKILL_MD} of {name}",
                   hint="run `memrepo skill list` to see the skills")


def _pending(repo: MemRepo, name: str, folder: SkillFolder, label: str) -> bool:
    if label != repo.verified_branch:
        return label == repo.provisional_branch
    other = find_skill(repo.store.branch_snapshot(repo.provisional_branch), name)
    return other is None or other.files != folder.files


def list_skills(repo_or_path: MemRepo | str, *, branch: str | None = None) -> list[dict[str, Any]]:
    """Every skill as ``{"name", "category", "description", "path", "branch", "pending"}``, sorted by category and name.

    With no ``branch``: verified's skills, then those that exist only on provisional; ``pending``
    marks a skill whose provisional version differs from verified (or that is only on provisional).
    """
    repo = MemRepo.open(repo_or_path)
    policy = repo.policy()
    if branch:
        return [_row(f, policy, branch, False) for f in _folders(repo.store.branch_snapshot(branch))]
    verified = {f.name: f for f in _folders(repo.store.branch_snapshot(repo.verified_branch))}
    pending = {f.name: f for f in _folders(repo.store.branch_snapshot(repo.provisional_branch))}
    rows = [_row(f, policy, repo.verified_branch, pending.get(n) is None or pending[n].files != f.files)
            for n, f in verified.items()]
    rows += [_row(f, policy, repo.provisional_branch, True) for n, f in pending.items() if n not in verified]
    return sorted(rows, key=lambda r: (r["category"] or "", r["name"]))


def _folders(snap: Snapshot) -> list[SkillFolder]:
    return [SkillFolder(n, c, folder_files(snap, c, n)) for c, n in skill_keys(snap)]


def _row(folder: SkillFolder, policy: Any, branch: str, pending: bool) -> dict[str, Any]:
    skill = parse_stored(folder, policy)
    return {"name": folder.name, "category": folder.category, "description": skill.description if skill else "",
            "path": folder.path, "branch": branch, "pending": pending, "valid": skill is not None}


def index(repo_or_path: MemRepo | str, rev: str | None = None) -> dict[str, Any]:
    """The skill index for a system prompt, from verified only (or a commit of it).

    Skills grouped by category (uncategorised first), sorted by name, each with its
    description collapsed to one line and cut to the policy's ``skills.index_description_chars``.
    The same commit always gives the same bytes. A SKILL.md that does not parse is left out
    and named in ``skipped``.
    """
    repo = MemRepo.open(repo_or_path)
    tip = repo.store.require_tip(repo.verified_branch)
    snap = repo.store.snapshot(rev or tip)
    if snap.commit is None or (snap.commit != tip and not repo.store.repo.descendant_of(tip, snap.commit)):
        raise UsageError(f"{rev} is not on {repo.verified_branch}", where=str(rev),
                         hint=f"the index is built from reviewed skills only: name a commit of {repo.verified_branch}")
    policy = repo.policy_at(snap, rev or repo.verified_branch)
    limit = SkillCaps.from_policy(policy.section("skills")).index_description_chars
    skills: list[dict[str, Any]] = []
    skipped: list[str] = []
    for folder in _folders(snap):
        skill = parse_stored(folder, policy)
        if skill is None or skill.name != folder.name:
            skipped.append(folder.path)
            continue
        skills.append({"name": folder.name, "category": folder.category,
                       "description": index_description(skill.description, limit), "path": folder.path})
    return {"commit": str(snap.commit), "text": render_index(skills), "skills": skills, "skipped": skipped}


def render_index(skills: list[dict[str, Any]]) -> str:
    """``- name: description`` lines; categorised skills indented under ``category:``. Empty: ""."""
    if not skills:
        return ""
    lines = [INDEX_HEADER]
    current: object = None
    for s in sorted(skills, key=lambda s: (s["category"] or "", s["name"])):
        if s["category"] and s["category"] != current:
            lines.append(f"{s['category']}:")
            current = s["category"]
        indent = "  " if s["category"] else ""
        lines.append(f"{indent}- {s['name']}: {s['description']}")
    return "\n".join(lines) + "\n"
