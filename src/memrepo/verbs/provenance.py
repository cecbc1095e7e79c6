"""Who wrote, in which session, at what cost: recorded as commit trailers."""
from __future__ import annotations

import os
from dataclasses import dataclass

import pygit2

from ..gitstore import Store


@dataclass(frozen=True)
class Provenance:
    agent: str | None = None
    session: str | None = None
    task: str | None = None
    tool_calls: int | None = None
    tokens: int | None = None
    cost: float | None = None

    @classmethod
    def from_env(cls, **given: object) -> Provenance:
        """Fill what was not given from MEMREPO_AGENT / MEMREPO_SESSION / MEMREPO_TASK."""
        values = {k: v for k, v in given.items() if v is not None}
        values.setdefault("agent", os.environ.get("MEMREPO_AGENT") or None)
        values.setdefault("session", os.environ.get("MEMREPO_SESSION") or None)
        values.setdefault("task", os.environ.get("MEMREPO_TASK") or None)
        return cls(**values)  # type: ignore[arg-type]

    def trailers(self) -> list[tuple[str, str]]:
        out = []
        for key, value in (("Memrepo-Agent", self.agent), ("Memrepo-Session", self.session), ("Memrepo-Task", self.task),
                           ("Memrepo-Tool-Calls", self.tool_calls), ("Memrepo-Tokens", self.tokens),
                           ("Memrepo-Cost", self.cost)):
            if value is not None and value != "":
                out.append((key, str(value)))
        return out

    def signature(self, store: Store) -> pygit2.Signature | None:
        """Commits by an agent are authored as the agent (committer stays the configured identity)."""
        if not self.agent:
            return None
        return pygit2.Signature(self.agent, f"{_slug(self.agent)}@agents.memrepo")


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "-" for c in name.lower()).strip("-") or "agent"
