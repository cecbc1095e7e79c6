"""A skill folder read from a working tree (for checks of files pre-commit passes one by one)."""
from __future__ import annotations

from pathlib import Path

from ...gitstore import BLOB, EXEC, LINK, FileBlob
from ...model.skill import locate
from ...policy.skillcheck import skill_base


def skill_folder_on_disk(root: Path, rel: str) -> dict[str, FileBlob]:
    """Every file of the skill folder holding ``rel`` (repository paths), as the working tree has them."""
    loc = locate(rel)
    if loc is None:
        return {}
    base = skill_base(loc[0], loc[1])
    folder = root / base
    out: dict[str, FileBlob] = {}
    if not folder.is_dir() or folder.is_symlink():
        return out
    for path in sorted(folder.rglob("*")):
        key = path.relative_to(root).as_posix()
        spot = locate(key)
        if spot is None or (spot[0], spot[1]) != (loc[0], loc[1]) or ".git" in path.relative_to(folder).parts:
            continue
        if path.is_symlink():
            out[key] = FileBlob(LINK, str(path.readlink()).encode())
        elif path.is_file():
            out[key] = FileBlob(EXEC if path.stat().st_mode & 0o111 else BLOB, path.read_bytes())
    return out
