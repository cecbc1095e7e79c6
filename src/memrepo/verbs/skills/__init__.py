"""Skill verbs: procedural memory as ``skills/[category/]<name>/SKILL.md`` folders (Agent Skills format).

Writes (create, patch, edit, write_file, remove_file, delete, import_dir) are each one commit on
provisional, checked on their result; reads (view, list_skills) and the prompt index (from
verified only) never write. ``repo`` is a :class:`memrepo.repo.MemRepo` or a path.
"""
from __future__ import annotations

from .common import SkillResult
from .importer import import_dir
from .manage import create, delete, edit, patch, remove_file, write_file
from .read import index, list_skills, render_index, view

__all__ = [
           "SkillResult",
           "create",
           "delete",
           "edit",
           "import_dir",
           "index",
           "list_skills",
           "patch",
           "remove_file",
           "render_index",
           "view",
           "write_file",
]
