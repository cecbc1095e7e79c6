"""The audit log: blocked writes and detected injections, kept in git on its own ref."""
from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from typing import Any

from ..findings import Finding, escape_excerpt
from ..gitstore import Commit, Snapshot, format_message
from ..repo import AUDIT_REF, MemRepo


def append_audit(repo: MemRepo, record: dict[str, Any]) -> None:
    """Append one JSON line to audit/<YYYY-MM>.jsonl on the audit ref (compare-and-swap, retried)."""
    record = {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **record}
    path = f"audit/{record['time'][:7]}.jsonl"
    line = (json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")

    def build(snap: Snapshot) -> Commit:
        old = snap.read(path) or b""
        subject = f"audit: {record.get('event', 'event')} {','.join(record.get('rules', []))}".strip()
        return Commit({path: old + line}, format_message(subject, "", []))

    repo.store.transact(AUDIT_REF, build)


def record_blocked(repo: MemRepo, ops: Sequence[Any], findings: Iterable[Finding], prov: Any, branch: str) -> None:
    from .write import content_hash

    findings = list(findings)
    for op in ops:
        text = getattr(op, "text", "") or getattr(op, "old", "")
        append_audit(repo, {
            "event": "blocked_write", "action": getattr(op, "action", "write"), "origin": getattr(op, "origin", ""),
            "scope": getattr(op, "scope", ""), "agent": getattr(prov, "agent", None) or "",
            "session": getattr(prov, "session", None) or "", "branch": branch,
            "rules": sorted({f.rule for f in findings}), "content_sha256": content_hash(text),
            "excerpt": escape_excerpt(text, 160),
        })


def read_audit(repo: MemRepo, event: str | None = None) -> list[dict[str, Any]]:
    snap = repo.store.branch_snapshot(AUDIT_REF)
    out: list[dict[str, Any]] = []
    for path, oid, _ in sorted(snap.walk("audit")):
        for raw in repo.store.repo[oid].read_raw().decode("utf-8", "replace").splitlines():
            try:
                rec = json.loads(raw)
            except json.JSONDecodeError:
                continue
            if event is None or rec.get("event") == event:
                out.append(rec)
    return out
