"""render: the frozen snapshot for a system prompt, from verified only, in Hermes' layout."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model.entry import ENTRY_DELIMITER
from ..policy.checks import content_findings, scope_usage
from ..repo import MemRepo

RULE = "═" * 46


@dataclass
class Block:
    scope: str
    title: str
    used: int
    cap: int | None
    entries: list[dict[str, Any]] = field(default_factory=list)

    @property
    def header(self) -> str:
        if self.cap:
            pct = round(100 * self.used / self.cap)
            return f"{self.title} [{pct}% — {self.used:,}/{self.cap:,} chars]"
        return f"{self.title} [{self.used:,} chars]"

    def text(self) -> str:
        body = ENTRY_DELIMITER.join(e["text"] for e in self.entries)
        return f"{RULE}\n{self.header}\n{RULE}\n{body}"


@dataclass
class Rendered:
    commit: str
    blocks: list[Block]

    def text(self) -> str:
        return "\n\n".join(b.text() for b in self.blocks if b.entries) + ("\n" if any(b.entries for b in self.blocks) else "")

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "text": self.text(),
                "blocks": [{"scope": b.scope, "title": b.title, "header": b.header, "used": b.used, "cap": b.cap,
                            "entries": b.entries} for b in self.blocks]}


def render(repo_or_path: MemRepo | str, rev: str | None = None) -> Rendered:
    """Render the scopes marked ``render: true`` from verified (or a verified commit)."""
    repo = MemRepo.open(repo_or_path)
    snap = repo.store.snapshot(rev) if rev else repo.store.branch_snapshot(repo.verified_branch)
    policy = repo.policy()
    blocks = []
    for name, spec in policy.scopes.items():
        if not spec.render:
            continue
        entries: list[dict[str, Any]] = []
        for stored in repo.entries(snap, name):
            if stored.entry is None:
                text = f"[BLOCKED: {stored.id} does not parse]"
                blocked = ["entry.parse"]
            else:
                bad = sorted({f.rule for f in content_findings(stored.entry, policy, stored.path) if f.blocking})
                text = f"[BLOCKED: {stored.id} failed the content scan ({', '.join(bad)})]" if bad else stored.entry.text
                blocked = bad
            entries.append({"id": stored.id, "text": text, "blocked": blocked})
        used = scope_usage([e["text"] for e in entries])
        blocks.append(Block(name, spec.title, used, spec.cap, entries))
    return Rendered(str(snap.commit), blocks)
