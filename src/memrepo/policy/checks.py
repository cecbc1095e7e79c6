"""Checks over entries and trees. Each returns findings; nothing here writes to git."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..findings import Finding
from ..model.entry import ENTRY_DELIMITER, Entry
from .config import Policy


def schema_findings(entry: Entry, policy: Policy, path: str) -> list[Finding]:
    """JSON-schema errors for an entry's ten fields (memory.schema.json)."""
    meta = entry.fields()
    meta.update(entry.extra)
    out = []
    for field, message in policy.schema_errors("memory", meta):
        out.append(Finding("schema", "error", f"field {field or '(frontmatter)'}: {message}", path=path, line=2,
                           hint="see policies/schemas/memory.schema.json", category="schema", entry=entry.id))
    return out


def entry_findings(entry: Entry, policy: Policy, path: str, body_line: int = 0) -> list[Finding]:
    """Everything that can be said of one entry on its own: schema, place, size, content."""
    out = schema_findings(entry, policy, path)
    if entry.scope not in policy.scopes:
        out.append(Finding("entry.unknown-scope", "error", f"scope {entry.scope!r} is not declared in policy",
                           path=path, hint=f"use one of: {', '.join(policy.scopes)}; or declare it in policies/policy.yaml",
                           category="schema", entry=entry.id))
    expected = f"{entry.id}.md"
    if path and not path.endswith("/" + expected):
        out.append(Finding("entry.id-mismatch", "error", f"id {entry.id!r} disagrees with the file name",
                           path=path, line=2, hint=f"rename the file to {expected} or fix the id field",
                           category="schema", entry=entry.id))
    if not entry.text.strip():
        out.append(Finding("entry.empty", "error", "entry has no content", path=path, hint="write the fact in the body",
                           category="schema", entry=entry.id))
    cap = policy.entry_cap(entry.scope)
    if len(entry.text) > cap:
        out.append(Finding("cap.entry", "error", f"entry is {len(entry.text):,} chars; the cap is {cap:,}", path=path,
                           hint="split it or shorten it; long material belongs in a skill or the knowledge scope",
                           category="cap", entry=entry.id))
    out.extend(content_findings(entry, policy, path, body_line))
    return out


def content_findings(entry: Entry, policy: Policy, path: str, body_line: int = 0) -> list[Finding]:
    """The integrity guard: the content scan, stricter for external_tool entries."""
    findings = policy.scanner().scan_text(entry.text, path=path, line=body_line or 1)
    strict = bool(policy.origin_rule(entry.origin).get("integrity_guard"))
    out = []
    for f in findings:
        if strict and f.severity == "warning":
            from dataclasses import replace

            f = replace(f, severity="error", hint=(f.hint + " " if f.hint else "") + "(integrity guard: external_tool content)")
        out.append(f if f.entry else f.at(path, entry=entry.id))
    return out


def scope_usage(texts: Sequence[str]) -> int:
    """Characters as Hermes Agent counts them: the entries joined by the § delimiter."""
    return len(ENTRY_DELIMITER.join(texts))


def cap_findings(by_scope: dict[str, list[str]], policy: Policy, where: str = "") -> list[Finding]:
    out = []
    for scope, texts in sorted(by_scope.items()):
        spec = policy.scopes.get(scope)
        if spec is None or not spec.cap:
            continue
        used = scope_usage(texts)
        if used > spec.cap:
            out.append(Finding("cap.scope", "error", f"scope {scope} uses {used:,}/{spec.cap:,} chars",
                               path=where or f"memories/{scope}/", hint="replace or remove entries to get under the cap",
                               category="cap"))
    return out


def duplicate_id_findings(ids: Iterable[tuple[str, str]]) -> list[Finding]:
    """The same id (or ids differing only by case) in two places."""
    seen: dict[str, str] = {}
    out = []
    for entry_id, path in sorted(ids, key=lambda x: x[1]):
        key = entry_id.lower()
        if key in seen:
            out.append(Finding("entry.duplicate-id", "error", f"id {entry_id!r} is also used by {seen[key]}", path=path,
                               hint="ids must be unique across scopes (case-insensitively); rename one",
                               category="schema", entry=entry_id))
        else:
            seen[key] = path
    return out
