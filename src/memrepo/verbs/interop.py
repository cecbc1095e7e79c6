"""import / export: Hermes Agent's memory folder and Agent OS one-line files.

Imports go through the ordinary write pipeline (scan, duplicates, schema, caps) in one commit
on provisional, all or nothing, and are never promoted by the import: a person reviews them
like any agent write. Exports read verified (by default) and write files Hermes Agent or an
Agent OS tool loads as they are.

Round trips lose nothing:
- Hermes: ``<dir>/memories/MEMORY.md`` and ``USER.md`` hold only the entry texts, in order.
  Imported entries get ids that sort in file order and one shared ``updated`` time, so the
  exported order (the render order: updated, then id) is the file order again.
- Agent OS: every line keeps its ten fields (id, kind, type, source_type, ttl, tags, updated,
  ver, origin; verification becomes ``pending`` until promoted). Exports are ordered by
  (updated, id), which does not depend on the scope an import chose.
"""
from __future__ import annotations

import os
import secrets
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from ..errors import NotFound, ParseError, UsageError
from ..gitstore import EXEC, LINK, Snapshot
from ..model.entry import ORIGINS, Entry, now_iso
from ..repo import MemRepo
from .provenance import Provenance
from .write import Op, WriteResult, apply_ops

SKILLS_DIR = "skills"
_B32 = "0123456789abcdefghjkmnpqrstvwxyz"


@dataclass
class ImportResult:
    format: str
    source: str
    branch: str
    commit: str | None
    entries: list[dict[str, Any]] = field(default_factory=list)
    skills: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    skills_commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        added = sum(1 for e in self.entries if e["status"] == "added")
        return {"format": self.format, "source": self.source, "branch": self.branch, "commit": self.commit,
                "imported": added, "duplicates": sum(1 for e in self.entries if e["status"] == "duplicate"),
                "entries": self.entries, "skills": self.skills, "skills_commit": self.skills_commit, "warnings": self.warnings, "promoted": False}


@dataclass
class ExportResult:
    format: str
    target: str
    branch: str
    commit: str | None
    files: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"format": self.format, "target": self.target, "branch": self.branch, "commit": self.commit,
                "files": self.files, "counts": self.counts, "skipped": self.skipped}


# -- shared ----------------------------------------------------------------------------------------

def _read_branch(repo: MemRepo, branch: str | None) -> tuple[str, Snapshot]:
    name = {None: repo.verified_branch, "verified": repo.verified_branch,
            "provisional": repo.provisional_branch}.get(branch, branch)
    assert name is not None
    if repo.store.tip(name) is None:
        raise UsageError(f"unknown branch {branch!r}", where="--branch", hint="use verified (default) or provisional")
    return name, repo.store.branch_snapshot(name)


def _ordered_ids(scope: str, count: int) -> list[str]:
    """Fresh ids that sort in the given order: ``m261129-k3x9-0001`` ..."""
    day = time.strftime("%y%m%d", time.gmtime())
    batch = "".join(secrets.choice(_B32) for _ in range(4))
    return [f"{scope[:1]}{day}-{batch}-{n:04d}" for n in range(1, count + 1)]


def _write_result(result: WriteResult, out: ImportResult) -> None:
    out.branch, out.commit = result.branch, result.commit
    out.entries = [{"id": r.id, "scope": r.scope, "status": r.status} for r in result.results]


def _atomic_write(path: Path, data: bytes, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.memrepo-tmp")
    try:
        tmp.write_bytes(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}", where=str(path),
                         hint="check the folder exists and is writable") from None


def _check_origin(origin: str) -> None:
    if origin not in ORIGINS:
        raise UsageError(f"unknown origin {origin!r}", where="--origin", hint=f"use one of: {', '.join(ORIGINS)}")


# -- Hermes ----------------------------------------------------------------------------------------

def hermes_files(folder: Path) -> dict[str, Path]:
    """``{scope: file}`` for the MEMORY.md / USER.md found in a Hermes home or its memories/ folder."""
    from ..model.hermes import HERMES_FILES

    found = {}
    for scope, name in HERMES_FILES.items():
        for candidate in (folder / "memories" / name, folder / name):
            if candidate.is_file():
                found[scope] = candidate
                break
    return found


def import_hermes(repo_or_path: MemRepo | str | os.PathLike[str], folder: str | os.PathLike[str], *,
                  origin: str = "agent_inferred", skills: bool = True, prov: Provenance | None = None,
                  branch: str | None = None) -> ImportResult:
    """Import MEMORY.md / USER.md entries, then skills/ (the skills import verb), onto provisional.

    Entries keep ``origin`` (Hermes files do not record one); skills come in as external_tool.
    """
    from ..model.hermes import parse_hermes_file

    repo = MemRepo.open(repo_or_path)  # type: ignore[arg-type]
    _check_origin(origin)
    root = Path(folder)
    if not root.is_dir():
        raise NotFound(f"no such folder: {root}", where=str(root), hint="give a Hermes home (~/.hermes) or its memories/ folder")
    files = hermes_files(root)
    skills_root = root / SKILLS_DIR
    has_skills = skills and any(skills_root.rglob("SKILL.md")) if skills_root.is_dir() else False
    if not files and not has_skills:
        raise NotFound("no MEMORY.md, USER.md or skills/ found", where=str(root),
                         hint="give a Hermes home (~/.hermes, with memories/ and skills/) or its memories/ folder")
    out = ImportResult("hermes", str(root), branch or repo.provisional_branch, None)
    updated = now_iso()
    ops: list[Op] = []
    for scope, path in files.items():
        if scope not in repo.policy().scopes:
            raise UsageError(f"the policy has no {scope!r} scope", where=str(path), hint="declare it in policies/policy.yaml")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise NotFound(f"cannot read {path}: {exc.strerror or exc}", where=str(path), hint="check permissions") from None
        texts = parse_hermes_file(data, str(path))
        for text, entry_id in zip(texts, _ordered_ids(scope, len(texts))):
            ops.append(Op("add", scope=scope, text=text, id=entry_id, origin=origin, source_type="import",
                          updated=updated))
    if ops:
        _write_result(apply_ops(repo, ops, prov=prov, branch=branch), out)
    if has_skills:
        out.skills = _import_skills(repo, skills_root, prov, branch, out)
    return out


def _import_skills(repo: MemRepo, folder: Path, prov: Provenance | None, branch: str | None,
                   out: ImportResult) -> list[dict[str, Any]]:
    """Hermes skills through the skills import verb (one more commit; origin external_tool)."""
    try:
        from .skills import import_dir
    except ImportError:
        out.warnings.append("skills/ was not imported: the skills verbs are not available in this build")
        return []
    result = import_dir(repo, folder, prov=prov, branch=branch)
    rows = [dict(item, status=item.get("action", "imported")) for item in result.get("imported", [])]
    rows += [dict(item, status="failed") for item in result.get("failed", [])]
    out.skills_commit = result.get("commit")
    return rows


def export_hermes(repo_or_path: MemRepo | str | os.PathLike[str], folder: str | os.PathLike[str], *,
                  branch: str | None = None, skills: bool = True) -> ExportResult:
    """Write ``<folder>/memories/MEMORY.md``, ``USER.md`` (and ``<folder>/skills/``) from verified.

    ``folder`` is a Hermes home (``~/.hermes``): Hermes Agent loads the files as they are.
    Entries that fail the content scan are left out and listed in ``skipped``.
    """
    from ..model.hermes import HERMES_FILES, serialise_hermes
    from ..policy.checks import content_findings

    repo = MemRepo.open(repo_or_path)  # type: ignore[arg-type]
    name, snap = _read_branch(repo, branch)
    policy = repo.policy()
    root = Path(folder)
    out = ExportResult("hermes", str(root), name, str(snap.commit) if snap.commit else None)
    for scope, file_name in HERMES_FILES.items():
        texts = []
        for stored in repo.entries(snap, scope):
            if stored.entry is None:
                out.skipped.append({"id": stored.id, "scope": scope, "reason": "does not parse"})
                continue
            bad = sorted({f.rule for f in content_findings(stored.entry, policy, stored.path) if f.blocking})
            if bad:
                out.skipped.append({"id": stored.id, "scope": scope, "reason": f"content scan: {', '.join(bad)}"})
                continue
            texts.append(stored.entry.text)
        target = root / "memories" / file_name
        _atomic_write(target, serialise_hermes(texts).encode("utf-8"))
        out.files.append(str(target))
        out.counts[scope] = len(texts)
    if skills:
        out.counts["skill_files"] = _export_skills(snap, root / SKILLS_DIR, out)
    return out


def _export_skills(snap: Snapshot, dest: Path, out: ExportResult) -> int:
    count = 0
    for path, oid, mode in snap.walk(SKILLS_DIR):
        rel = path[len(SKILLS_DIR) + 1:]
        if "/" not in rel:  # skills/README.md and other top-level files are the repository's, not skills
            continue
        if mode == LINK:
            out.skipped.append({"path": path, "reason": "symbolic link"})
            continue
        target = dest / rel
        blob = snap.store.repo[oid]
        assert isinstance(blob, pygit2.Blob)
        _atomic_write(target, blob.data, 0o755 if mode == EXEC else 0o644)
        out.files.append(str(target))
        count += 1
    return count


# -- Agent OS --------------------------------------------------------------------------------------

def import_agentos(repo_or_path: MemRepo | str | os.PathLike[str], file: str | os.PathLike[str], *,
                   scope: str | None = None, prov: Provenance | None = None, branch: str | None = None) -> ImportResult:
    """Import an Agent OS file (``-``: stdin) onto provisional, keeping every field of every line.

    The format has no scope: ``scope`` chooses one; by default an entry whose ``type`` names a
    scope of the policy goes there (memrepo writes type = scope), any other to ``knowledge``.
    """
    from ..model.agentos import parse_agentos
    from ..model.text import decode_utf8

    repo = MemRepo.open(repo_or_path)  # type: ignore[arg-type]
    scopes = repo.policy().scopes
    if scope is not None and scope not in scopes:
        raise UsageError(f"unknown scope {scope!r}", where="--scope", hint=f"use one of: {', '.join(scopes)}")
    where = "stdin" if str(file) == "-" else str(file)
    try:
        data = sys.stdin.buffer.read() if str(file) == "-" else Path(file).read_bytes()
    except OSError as exc:
        raise NotFound(f"cannot read {where}: {exc.strerror or exc}", where=where, hint="give a readable file") from None
    entries = parse_agentos(decode_utf8(data, where), where)
    if not entries:
        raise ParseError("no entries in the file", where=where, hint="one '[ID|kind|...|origin] content' per line")
    fallback = "knowledge" if "knowledge" in scopes else next(iter(scopes))
    ops = []
    for e in entries:
        _check_origin_line(e, where)
        target = scope or (e.type if e.type in scopes else fallback)
        ops.append(Op("add", scope=target, text=e.text, id=e.id, tags=e.tags, kind=e.kind, type=e.type, ttl=e.ttl,
                      origin=e.origin, source_type=e.source_type, updated=e.updated, ver=e.ver))
    out = ImportResult("agentos", where, branch or repo.provisional_branch, None)
    _write_result(apply_ops(repo, ops, prov=prov, branch=branch), out)
    return out


def _check_origin_line(e: Entry, where: str) -> None:
    if e.origin not in ORIGINS:
        raise ParseError(f"entry {e.id}: unknown origin {e.origin!r}", where=where, hint=f"use one of: {', '.join(ORIGINS)}")


def agentos_text(repo_or_path: MemRepo | str | os.PathLike[str], *, branch: str | None = None,
                 scopes: Iterable[str] | None = None) -> tuple[str, ExportResult]:
    """The Agent OS file for a branch (default verified), one line per entry ordered by (updated, id)."""
    from ..model.agentos import serialise_agentos_file

    repo = MemRepo.open(repo_or_path)  # type: ignore[arg-type]
    name, snap = _read_branch(repo, branch)
    known = repo.policy().scopes
    wanted = set(scopes or ()) or None
    if wanted and wanted - set(known):
        raise UsageError(f"unknown scope {min(wanted - set(known))!r}", where="--scope",
                         hint=f"use one of: {', '.join(known)}")
    out = ExportResult("agentos", "", name, str(snap.commit) if snap.commit else None)
    entries = []
    for stored in repo.iter_entries(snap):
        if wanted and stored.scope not in wanted:
            continue
        if stored.entry is None:
            out.skipped.append({"id": stored.id, "scope": stored.scope, "reason": "does not parse"})
            continue
        entries.append(stored.entry)
        out.counts[stored.scope] = out.counts.get(stored.scope, 0) + 1
    entries.sort(key=lambda e: (e.updated, e.id))
    return serialise_agentos_file(entries), out


def export_agentos(repo_or_path: MemRepo | str | os.PathLike[str], file: str | os.PathLike[str], *,
                   branch: str | None = None, scopes: Iterable[str] | None = None) -> ExportResult:
    """Write the Agent OS file (``-``: stdout)."""
    text, out = agentos_text(repo_or_path, branch=branch, scopes=scopes)
    if str(file) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        out.target = "stdout"
    else:
        _atomic_write(Path(file), text.encode("utf-8"))
        out.target = str(file)
        out.files.append(str(file))
    return out
