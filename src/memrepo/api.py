"""The Python API: one object per repository, calling the same verbs as the CLI and MCP server.

    from memrepo import Memory

    mem = Memory.open("~/agent-memory", agent="hermes")
    mem.remember("User prefers concise responses", scope="user")
    hits = mem.recall("how does the user like answers?")["results"]
    prompt_block = mem.render()          # the frozen snapshot, from verified only

Every method returns plain data (dicts and lists, the same JSON the CLI prints with
``--format json``) and raises :class:`memrepo.errors.MemrepoError` subclasses for anything
the caller can fix, exactly as the CLI reports them (``what``, ``where``, ``hint``,
``to_json()``). Writes land on the provisional branch with the agent name and a session id
as commit trailers; nothing an agent writes reaches verified without ``promote``.
"""
from __future__ import annotations

import os
import uuid
from collections.abc import Sequence
from typing import Any

from .repo import MemRepo
from .verbs.provenance import Provenance


class Memory:
    """A memory repository opened for one agent session. Create with :meth:`open`."""

    def __init__(self, repo: MemRepo, prov: Provenance) -> None:
        self.repo = repo
        self.prov = prov

    @classmethod
    def open(cls, path: str | os.PathLike[str] = ".", agent: str | None = None, *, session: str | None = None,
             task: str | None = None) -> Memory:
        """Open the memory repository at ``path`` (raises NotARepository if there is none).

        ``agent`` and ``session`` are recorded on every write (defaults: $MEMREPO_AGENT, and
        $MEMREPO_SESSION or a fresh id for this object).
        """
        repo = MemRepo.open(os.path.expanduser(os.fspath(path)))
        prov = Provenance.from_env(agent=agent, session=session, task=task)
        if prov.session is None:
            prov = Provenance(agent=prov.agent, session=f"py-{uuid.uuid4().hex[:12]}", task=prov.task)
        return cls(repo, prov)

    @property
    def path(self) -> str:
        return str(self.repo.path)

    # -- memory writes (provisional) ------------------------------------------------------------
    def remember(self, text: str, *, scope: str = "memory", id: str | None = None, tags: Sequence[str] = (),
                 kind: str = "fact", ttl: str = "permanent", origin: str = "agent_inferred",
                 source_type: str | None = None) -> dict[str, Any]:
        """Add an entry (Hermes ``add``). Raises CapExceeded (with ``data['current_entries']``), Blocked ..."""
        from .verbs.write import remember

        return remember(self.repo, text, scope=scope, id=id, tags=tags, kind=kind, ttl=ttl, origin=origin,
                        source_type=source_type, prov=self.prov).to_json()

    def replace(self, old: str, new: str, *, scope: str | None = None, origin: str = "agent_inferred") -> dict[str, Any]:
        """Replace the entry named by id or unique substring ``old`` (ver + 1)."""
        from .verbs.write import replace

        return replace(self.repo, old, new, scope=scope, origin=origin, prov=self.prov).to_json()

    def forget(self, old: str, *, scope: str | None = None) -> dict[str, Any]:
        """Remove the entry named by id or unique substring ``old``."""
        from .verbs.write import forget

        return forget(self.repo, old, scope=scope, prov=self.prov).to_json()

    # -- reading ----------------------------------------------------------------------------------
    def recall(self, query: str, k: int = 5, *, branch: str | None = None,
               scopes: Sequence[str] | None = None) -> dict[str, Any]:
        """Hybrid search over every scope: ``{"results": [{"id", "scope", "score", "text", ...}], ...}``."""
        from .verbs.recall import recall

        return recall(self.repo, query, k=k, branch=branch, scopes=scopes).to_json()

    def render(self, *, at: str | None = None) -> str:
        """The frozen snapshot for a system prompt (verified only)."""
        from .verbs.render import render

        return render(self.repo, at).text()

    def review(self, branch: str | None = None) -> list[dict[str, Any]]:
        """Pending changes (provisional against verified), with origin, author and findings."""
        from .verbs.review import review

        return [item.to_json() for item in review(self.repo, branch)]

    def promote(self, ids: Sequence[str], *, reviewer: str) -> dict[str, Any]:
        """A person puts reviewed pending ids on verified (``reviewer`` is 'Name <email>')."""
        from .verbs.promote import promote

        return promote(self.repo, ids, reviewer=reviewer).to_json()

    # -- skills -----------------------------------------------------------------------------------
    def _skills(self) -> Any:
        from .verbs import skills

        return skills

    def skills(self) -> list[dict[str, Any]]:
        """Skills on provisional: name, category, description."""
        return list(self._skills().list_skills(self.repo))

    def skill_view(self, name: str, file: str | None = None) -> dict[str, Any]:
        """A skill's SKILL.md (or one of its files)."""
        return dict(self._skills().view(self.repo, name, file))

    def skill_create(self, name: str, content: str, *, category: str | None = None,
                     origin: str = "agent_inferred") -> dict[str, Any]:
        return dict(self._skills().create(self.repo, name, content, category=category, origin=origin,
                                          prov=self.prov).to_json())

    def skill_patch(self, name: str, old: str, new: str, *, file: str | None = None, replace_all: bool = False,
                    origin: str = "agent_inferred") -> dict[str, Any]:
        """Fuzzy find-and-replace inside a skill file (SKILL.md by default)."""
        return dict(self._skills().patch(self.repo, name, old, new, file=file, replace_all=replace_all, origin=origin,
                                         prov=self.prov).to_json())

    def skill_edit(self, name: str, content: str, *, origin: str = "agent_inferred") -> dict[str, Any]:
        return dict(self._skills().edit(self.repo, name, content, origin=origin, prov=self.prov).to_json())

    def skill_write_file(self, name: str, path: str, content: str, *, origin: str = "agent_inferred") -> dict[str, Any]:
        return dict(self._skills().write_file(self.repo, name, path, content, origin=origin, prov=self.prov).to_json())

    def skill_remove_file(self, name: str, path: str, *, origin: str = "agent_inferred") -> dict[str, Any]:
        return dict(self._skills().remove_file(self.repo, name, path, origin=origin, prov=self.prov).to_json())

    def skill_delete(self, name: str, *, origin: str = "agent_inferred") -> dict[str, Any]:
        return dict(self._skills().delete(self.repo, name, origin=origin, prov=self.prov).to_json())


__all__ = ["Memory"]
