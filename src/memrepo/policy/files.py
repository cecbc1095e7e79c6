"""Findings for files of a tree, dispatched by where they live (memories/, skills/, policies/)."""
from __future__ import annotations

from typing import Iterable, Mapping

from ..errors import MemrepoError
from ..findings import Finding
from ..gitstore import BLOB, COMMIT, EXEC, LINK, FileBlob
from ..model.entry import ENTRY_DELIMITER, parse_entry, path_scope_id
from ..model.text import decode_utf8, split_frontmatter
from .checks import cap_findings, duplicate_id_findings, entry_findings
from .config import POLICY_DIR, Policy, load_policy

MAX_FILE_BYTES = 1 << 20


def unsafe_path_finding(path: str) -> Finding | None:
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in path:
        return Finding("path.unsafe", "error", f"unsafe path {path!r}", path=path,
                       hint="paths must be relative, without '..', '.' or backslashes", category="path")
    return None


def entry_file_findings(path: str, blob: FileBlob, policy: Policy) -> list[Finding]:
    loc = path_scope_id(path)
    if loc is None:
        return [Finding("path.unexpected", "error", "memories/ holds only memories/<scope>/<id>.md files", path=path,
                        hint="move it to memories/<scope>/<id>.md or out of memories/", category="path")]
    if blob.mode != BLOB:
        kind = {LINK: "a symlink", COMMIT: "a submodule", EXEC: "executable"}.get(blob.mode, f"mode {blob.mode:o}")
        return [Finding("entry.mode", "error", f"entry file is {kind}", path=path,
                        hint="entries are plain text files (mode 100644)", category="schema")]
    if len(blob.data) > MAX_FILE_BYTES:
        return [Finding("entry.size", "error", f"entry file is {len(blob.data):,} bytes", path=path,
                        hint="entries are short facts", category="cap")]
    try:
        entry = parse_entry(blob.data, path)
        _, _, body_line = split_frontmatter(decode_utf8(blob.data, path), path)
    except MemrepoError as exc:
        line = exc.where.rsplit(":", 1)[-1]
        return [Finding("entry.parse", "error", exc.what, path=path, line=int(line) if line.isdigit() else 1,
                        hint=exc.hint, category="schema", entry=loc[1])]
    return entry_findings(entry, policy, path, body_line)


def policy_file_findings(files: Mapping[str, FileBlob], label: str) -> list[Finding]:
    """Does the policies/ folder load? (Any error is a finding, never a crash.)"""
    inner = {p[len(POLICY_DIR) + 1:]: b.data for p, b in files.items() if p.startswith(POLICY_DIR + "/")}
    try:
        policy = load_policy(inner, source=label)
        policy.scanner()
    except MemrepoError as exc:
        return [Finding("policy.invalid", "error", exc.what, path=exc.where.split(":", 1)[-1] or POLICY_DIR,
                        hint=exc.hint, category="policy")]
    return []


def tree_findings(files: Mapping[str, FileBlob], policy: Policy, only: Iterable[str] | None = None) -> list[Finding]:
    """Check every file (or only the given paths) plus the tree-wide rules (caps, duplicate ids)."""
    targets = set(only) if only is not None else set(files)
    out: list[Finding] = []
    for path in sorted(targets):
        bad = unsafe_path_finding(path)
        if bad:
            out.append(bad)
            continue
        blob = files.get(path)
        if blob is None:
            continue
        if path.startswith("memories/") and not path.endswith("/README.md") and path != "memories/README.md":
            out.extend(entry_file_findings(path, blob, policy))
    out.extend(skill_tree_findings(files, policy, targets))
    if any(p.startswith(POLICY_DIR + "/") for p in targets):
        out.extend(policy_file_findings(files, "change"))
    out.extend(case_collision_findings(files))
    ids = [(loc[1], p) for p in files if (loc := path_scope_id(p))]
    out.extend(f for f in duplicate_id_findings(ids) if only is None or f.path in targets)
    by_scope: dict[str, list[str]] = {}
    for p, blob in sorted(files.items()):
        loc = path_scope_id(p)
        if loc and blob.mode == BLOB:
            try:
                by_scope.setdefault(loc[0], []).append(parse_entry(blob.data, p).text)
            except MemrepoError:
                continue
    touched_scopes = {loc[0] for p in targets if (loc := path_scope_id(p))}
    out.extend(f for f in cap_findings(by_scope, policy) if only is None or f.path.split("/")[1] in touched_scopes)
    return out


def case_collision_findings(files: Mapping[str, FileBlob]) -> list[Finding]:
    seen: dict[str, str] = {}
    out = []
    for p in sorted(files):
        key = p.lower()
        if key in seen and seen[key] != p:
            out.append(Finding("path.case-collision", "error", f"{p!r} differs from {seen[key]!r} only by case", path=p,
                               hint="rename one: case-insensitive file systems cannot hold both", category="path"))
        seen.setdefault(key, p)
    return out


def skill_tree_findings(files: Mapping[str, FileBlob], policy: Policy, targets: set[str]) -> list[Finding]:
    """Structure and security findings for each skill folder that has a touched file."""
    try:
        from .skillcheck import skill_folder_findings
    except ImportError:  # skills land with the skills issue
        return []
    return skill_folder_findings(files, policy, targets)


__all__ = ["tree_findings", "entry_file_findings", "policy_file_findings", "unsafe_path_finding", "ENTRY_DELIMITER"]
