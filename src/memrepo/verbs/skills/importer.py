"""skill import: bring skills from another tree (a Hermes ``~/.hermes/skills`` folder, another
repository's ``skills/``) onto provisional as external_tool, checked, in one commit.

Each folder holding a SKILL.md is a skill; ``[category/]name`` comes from its place below
the source (a leading ``skills/`` is dropped) unless ``category`` is given. Hermes frontmatter
is folded into the Agent Skills shape (``version``, ``tags`` ... under ``metadata``). A skill
that fails its checks is reported (and audited), never committed; the others go in.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...errors import MemrepoError, UsageError
from ...findings import Finding
from ...gitstore import BLOB, EXEC, LINK, Commit, FileBlob, Snapshot, format_message
from ...model.skill import SKILL_MD, SKILLS_DIR, check_category, check_skill_name
from ...policy.config import Policy
from ...policy.skillcheck import skill_base, skill_findings
from ...repo import MemRepo
from ..audit import append_audit
from ..provenance import Provenance
from .common import find_skill, normalise_skill_md, parse_stored

SKIPPED_NAMES = frozenset({".git", ".hg", ".svn", "__pycache__", ".DS_Store"})
MAX_READ_BYTES = 16 << 20  # far above any policy cap: the checks report the real limit
ORIGIN = "external_tool"


@dataclass
class Candidate:
    """A skill folder found in the source tree, read into memory."""

    source: str  # its folder, relative to the source root
    name: str
    category: str | None
    files: dict[str, FileBlob] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str = ""


def import_dir(repo_or_path: MemRepo | str, src_dir: str | os.PathLike[str], *, category: str | None = None,
               prov: Provenance | None = None, branch: str | None = None) -> dict[str, Any]:
    """Import every skill under ``src_dir`` onto provisional (origin external_tool), in one commit.

    Returns ``{"branch", "commit", "imported": [...], "failed": [...]}``; each imported skill
    has ``name, category, path, action (created|updated|unchanged), version, findings, notes``;
    each failed one ``name, category, source, message, findings``.
    """
    repo = MemRepo.open(repo_or_path)
    prov = prov or Provenance()
    root = Path(src_dir)
    if not root.is_dir():
        raise UsageError(f"not a folder: {root}", where=str(root),
                         hint="give a folder of skills, e.g. ~/.hermes/skills or another repository's skills/")
    if category is not None:
        check_category(category, where="--category")
    candidates = discover(root, category)
    if not candidates:
        raise UsageError("no SKILL.md found", where=str(root),
                         hint="a skill is a folder holding SKILL.md: <src>/[category/]<name>/SKILL.md")
    policy = repo.policy()
    target = branch or repo.provisional_branch
    outcome: dict[str, Any] = {}

    def build(snap: Snapshot) -> Commit | None:
        imported, failed, changes = _plan(snap, policy, candidates)
        outcome.update(imported=imported, failed=failed)
        if not changes:
            return None
        names = [i["name"] for i in imported if i["action"] != "unchanged"]
        trailers = [("Memrepo-Op", "skill-import")] + [("Memrepo-Skill", n) for n in names]
        trailers += [("Memrepo-Origin", ORIGIN), ("Memrepo-Source", str(root))] + prov.trailers()
        subject = f"skill-import: {', '.join(names)}" if len(names) <= 5 else f"skill-import: {len(names)} skills"
        return Commit(changes, format_message(subject, "", trailers))

    oid, _ = repo.store.transact(target, build, author=prov.signature(repo.store))
    for fail in outcome.get("failed", []):
        _audit(repo, fail, prov, target)
    return {"branch": target, "commit": str(oid) if oid is not None else None, "source": str(root),
            "imported": outcome.get("imported", []), "failed": outcome.get("failed", [])}


def discover(root: Path, category: str | None) -> list[Candidate]:
    """Skill folders under ``root`` (topmost SKILL.md wins; a skill's own subfolders are its files)."""
    found: list[Candidate] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_NAMES)
        if SKILL_MD not in filenames:
            continue
        folder = Path(dirpath)
        dirnames[:] = []  # everything below belongs to this skill
        rel = folder.relative_to(root).parts
        if rel and rel[0] == SKILLS_DIR:
            rel = rel[1:]
        name = folder.name if rel else root.resolve().name
        cat = category if category is not None else (rel[-2] if len(rel) >= 2 else None)
        cand = Candidate("/".join(folder.relative_to(root).parts) or ".", name, cat)
        if len(rel) > 2 and category is None:
            cand.notes.append(f"nested {len(rel)} folders deep: filed under category {cat!r}")
        _read_folder(folder, cand)
        found.append(cand)
    return sorted(found, key=lambda c: c.source)


def _read_folder(folder: Path, cand: Candidate) -> None:
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        skipped = sorted(d for d in dirnames if d in SKIPPED_NAMES) + sorted(f for f in filenames if f in SKIPPED_NAMES)
        cand.notes += [f"skipped {Path(dirpath, s).relative_to(folder).as_posix()}" for s in skipped]
        links = [d for d in dirnames if (Path(dirpath) / d).is_symlink()]
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_NAMES and d not in links)
        for fname in sorted([f for f in filenames if f not in SKIPPED_NAMES] + links):
            path = Path(dirpath) / fname
            rel = path.relative_to(folder).as_posix()
            try:
                st = path.lstat()
                if stat.S_ISLNK(st.st_mode):
                    cand.files[rel] = FileBlob(LINK, os.fsencode(os.readlink(path)))
                elif not stat.S_ISREG(st.st_mode):
                    cand.error = cand.error or f"{rel} is not a regular file"
                elif st.st_size > MAX_READ_BYTES:
                    cand.error = cand.error or f"{rel} is {st.st_size:,} bytes, too large to import"
                else:
                    cand.files[rel] = FileBlob(EXEC if st.st_mode & 0o111 else BLOB, path.read_bytes())
            except OSError as exc:
                cand.error = cand.error or f"cannot read {rel}: {exc.strerror}"


def _plan(snap: Snapshot, policy: Policy, candidates: list[Candidate]) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                                                               dict[str, FileBlob | None]]:
    imported: list[dict[str, Any]] = []
    failed: list[dict[str, Any]] = []
    changes: dict[str, FileBlob | None] = {}
    taken: set[str] = set()
    for cand in candidates:
        try:
            entry, folder_changes = _plan_one(snap, policy, cand, taken)
        except _Failed as exc:
            failed.append({"name": cand.name, "category": cand.category, "source": cand.source, "message": exc.message,
                           "findings": [f.to_json() for f in exc.findings], "notes": cand.notes})
            continue
        taken.add(cand.name)
        imported.append(entry)
        changes.update(folder_changes)
    return imported, failed, changes


class _Failed(Exception):
    def __init__(self, message: str, findings: list[Finding] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.findings = findings or []


def _plan_one(snap: Snapshot, policy: Policy, cand: Candidate, taken: set[str]) -> tuple[dict[str, Any],
                                                                                       dict[str, FileBlob | None]]:
    if cand.error:
        raise _Failed(cand.error)
    try:
        check_skill_name(cand.name, where=cand.source)
        if cand.category is not None:
            check_category(cand.category, where=cand.source)
        existing = find_skill(snap, cand.name)
    except MemrepoError as exc:
        raise _Failed(f"{exc.what} ({exc.hint})" if exc.hint else exc.what) from None
    if cand.name in taken:
        raise _Failed(f"another skill in this import is also called {cand.name!r}")
    if existing is not None and existing.category != cand.category:
        raise _Failed(f"a skill {cand.name!r} already exists at {existing.base}",
                      [Finding("skill.duplicate-name", "error", "skill names are unique across categories",
                               path=existing.path, hint="import it with --category to update that skill, or rename one",
                               category="skill", entry=cand.name)])
    base = skill_base(cand.category, cand.name)
    old = parse_stored(existing, policy) if existing is not None else None
    files = dict(cand.files)
    notes = list(cand.notes)
    if SKILL_MD in files and files[SKILL_MD].mode != LINK:
        norm = normalise_skill_md(files[SKILL_MD].data, f"{base}/{SKILL_MD}", policy=policy, old=old,
                                  claimed_origin=ORIGIN, category=cand.category)
        files[SKILL_MD] = FileBlob(BLOB, norm.data)
        notes += norm.notes
    findings = skill_findings(files, policy, name=cand.name, category=cand.category)
    blocking = [f for f in findings if f.blocking]
    if blocking:
        raise _Failed(f"refused by the skill checks ({', '.join(sorted({f.rule for f in blocking}))})", blocking)
    before = existing.files if existing is not None else {}
    unchanged = existing is not None and _same_but_version(before, files)
    changes: dict[str, FileBlob | None] = {}
    if not unchanged:
        changes = {f"{base}/{p}": b for p, b in files.items() if before.get(p) != b}
        changes.update({f"{base}/{p}": None for p in before if p not in files})
    skill = parse_stored(existing, policy) if unchanged and existing is not None else None
    if not unchanged:
        from .common import SkillFolder

        skill = parse_stored(SkillFolder(cand.name, cand.category, files), policy)
    entry = {"name": cand.name, "category": cand.category, "path": f"{base}/{SKILL_MD}", "source": cand.source,
             "action": "unchanged" if unchanged else ("updated" if existing is not None else "created"),
             "version": skill.version if skill else None, "files": sorted(files),
             "findings": [f.to_json() for f in findings], "notes": notes}
    return entry, changes


def _same_but_version(before: dict[str, FileBlob], after: dict[str, FileBlob]) -> bool:
    """Re-importing the same skill is a no-op even though normalising it would bump the version."""
    if set(before) != set(after):
        return False
    for path, blob in after.items():
        if path == SKILL_MD:
            if _without_version(before[path].data) != _without_version(blob.data):
                return False
        elif before[path] != blob:
            return False
    return True


def _without_version(data: bytes) -> bytes:
    return b"\n".join(line for line in data.split(b"\n") if not line.strip().startswith(b"version:"))


def _audit(repo: MemRepo, fail: dict[str, Any], prov: Provenance, branch: str) -> None:
    rules = sorted({str(f.get("rule")) for f in fail.get("findings", [])})
    try:
        append_audit(repo, {"event": "blocked_write", "action": "skill-import", "origin": ORIGIN, "scope": "skills",
                            "skill": fail["name"], "source": fail["source"], "agent": prov.agent or "",
                            "session": prov.session or "", "branch": branch, "rules": rules,
                            "excerpt": fail["message"][:160]})
    except MemrepoError:
        pass
