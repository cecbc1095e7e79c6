"""What `memrepo review` says about a pending skill: category, origin, description, findings, a readable diff."""
from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...errors import MemrepoError
from ...gitstore import FileBlob, Snapshot
from ...model.skill import SKILL_MD, locate, read_frontmatter
from ...policy.config import Policy
from ...policy.skillcheck import skill_findings
from .common import folder_files

if TYPE_CHECKING:
    from ..pending import PathChange
    from ..review import ReviewItem


def fill_skill_items(items: Sequence[ReviewItem], changes: Sequence[PathChange], head: Snapshot, policy: Policy) -> None:
    """Complete the review items of kind "skill" in place (the rest is left alone)."""
    for item in items:
        if item.kind != "skill":
            continue
        chs = [c for c in changes if c.path in item.paths]
        loc = locate(chs[0].path) if chs else None
        if loc is None:
            continue
        category, name = loc[0], loc[1]
        item.scope = category or ""
        folder = folder_files(head, category, name)
        md_change = next((c for c in chs if c.path.endswith("/" + SKILL_MD) and locate(c.path)[2] == SKILL_MD), None)  # type: ignore[index]
        new_md = md_change.new if md_change is not None else (folder[SKILL_MD].data if SKILL_MD in folder else None)
        new_meta = _meta(new_md)
        old_meta = _meta(md_change.old) if md_change is not None else new_meta
        item.origin = str(new_meta.get("origin") or old_meta.get("origin") or item.origin or "")
        item.text = _summary(new_meta, folder) if folder else ""
        if md_change is not None and md_change.old is not None and old_meta.get("description") != new_meta.get("description"):
            item.old_text = _summary(old_meta, None)  # shown as "was:" only when the description itself changed
        item.diff = "".join(readable_diff(c) for c in sorted(chs, key=lambda c: (not c.path.endswith(SKILL_MD), c.path)))
        if folder:
            item.findings.extend(skill_findings(folder, policy, name=name, category=category))


def _meta(data: bytes | None) -> dict[str, Any]:
    if data is None:
        return {}
    try:
        meta, _, _ = read_frontmatter(data, SKILL_MD)
    except MemrepoError:
        return {}
    metadata = meta.get("metadata")
    out = dict(metadata) if isinstance(metadata, dict) else {}
    out["description"] = meta.get("description", "")
    return out


def _summary(meta: dict[str, Any], folder: dict[str, FileBlob] | None) -> str:
    text = " ".join(str(meta.get("description") or "").split())
    if meta.get("version"):
        text += f" (version {meta['version']})"
    if folder is not None and len(folder) > 1:
        text += f" [{len(folder)} files]"
    return text


def readable_diff(ch: PathChange) -> str:
    """A unified diff; a binary or non-UTF-8 side is summarised, never dumped."""
    a = f"a/{ch.path}" if ch.old is not None else "/dev/null"
    b = f"b/{ch.path}" if ch.new is not None else "/dev/null"
    old, new = _text(ch.old), _text(ch.new)
    mode = ""
    if ch.old_mode and ch.new_mode and ch.old_mode != ch.new_mode:
        mode = f"mode {ch.old_mode:o} -> {ch.new_mode:o}: {ch.path}\n"
    if old is None or new is None:
        size = lambda d: "absent" if d is None else f"{len(d):,} bytes"
        return mode + f"Binary file {ch.path} ({size(ch.old)} -> {size(ch.new)})\n"
    out = "".join(difflib.unified_diff(old, new, a, b))
    if out and not out.endswith("\n"):
        out += "\n\\ No newline at end of file\n"
    return mode + out


def _text(data: bytes | None) -> list[str] | None:
    if data is None:
        return []
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None
