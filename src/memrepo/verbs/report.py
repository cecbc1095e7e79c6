"""Governance logs as views of git, and `memrepo report`: Markdown logs plus a health summary.

The four logs of Agent OS v2 are never edited by hand; each is computed from git:

* CONFLICT_LOG: ``conflict`` events on ``refs/memrepo/audit`` (fact overwrite, tag, conclusion, origin);
* DUPLICATE_LOG: ``duplicate`` events (exact no-ops, near-duplicate warnings, merges proposed by curate);
* MEMORY_INTEGRITY_LOG: blocked writes (injections found), rejections, subagent merges and their
  validator blocks, origin conflicts, and every commit with an external_tool write (from the
  provisional branch's history, via its Memrepo-Origin trailers);
* COST_LOG: the cost ledger (records, write costs, budgets crossed, confirmations).

``memrepo report`` writes them with HEALTH.md into ``governance/`` of the working tree (or
``--out DIR``): generated files, not commits, so they never enter review; the folder is added
to ``.git/info/exclude`` so ``git status`` stays clean. Run it again to refresh them.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..gitstore import NEWEST_FIRST, parse_trailers
from ..repo import MemRepo
from .audit import read_audit

KINDS = ("conflict", "duplicate", "integrity", "cost")
INTEGRITY_EVENTS = ("blocked_write", "rejected", "scope_merge", "scope_merge_blocked", "external_write")
COST_EVENTS = ("cost", "cost_confirm", "budget_exceeded")
FILES = {"conflict": "CONFLICT_LOG.md", "duplicate": "DUPLICATE_LOG.md", "integrity": "MEMORY_INTEGRITY_LOG.md",
         "cost": "COST_LOG.md"}


def external_writes(repo: MemRepo, limit: int = 500) -> list[dict[str, Any]]:
    """Commits on provisional carrying an external_tool write (newest first)."""
    tip = repo.store.tip(repo.provisional_branch)
    out: list[dict[str, Any]] = []
    if tip is None:
        return out
    for commit in repo.store.repo.walk(tip, NEWEST_FIRST):
        tr = parse_trailers(commit.message)
        if "external_tool" in tr.get("Memrepo-Origin", []):
            out.append({"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(commit.commit_time)),
                        "event": "external_write", "kind": "external_tool", "ids": tr.get("Memrepo-Entry", []),
                        "agent": (tr.get("Memrepo-Agent") or [""])[0], "commit": str(commit.id),
                        "branch": repo.provisional_branch, "decision": "pending review (provisional only)",
                        "rules": []})
            if len(out) >= limit:
                break
    return out


def governance_log(repo_or_path: MemRepo | str, kind: str) -> list[dict[str, Any]]:
    """The records of one governance log, oldest first."""
    repo = MemRepo.open(repo_or_path)
    if kind not in KINDS:
        raise UsageError(f"unknown log {kind!r}", where="--kind", hint=f"use one of: {', '.join(KINDS)}")
    records = read_audit(repo)
    if kind == "conflict":
        return [r for r in records if r.get("event") == "conflict"]
    if kind == "duplicate":
        return [r for r in records if r.get("event") == "duplicate"]
    if kind == "cost":
        return [r for r in records if r.get("event") in COST_EVENTS]
    out = [r for r in records if r.get("event") in INTEGRITY_EVENTS
           or (r.get("event") == "conflict" and r.get("kind") == "origin")]
    out += external_writes(repo)
    return sorted(out, key=lambda r: str(r.get("time", "")))


def describe(r: dict[str, Any]) -> str:
    """One line for a record of any log."""
    ev = r.get("event", "")
    ids = ", ".join(r.get("ids", []) or [])
    if ev == "conflict":
        return f"{r.get('kind')} conflict [{ids}] {r.get('detail', '')} -> {r.get('decision', '')}".strip()
    if ev == "duplicate":
        sim = f" similarity {r['similarity']:.2f}" if isinstance(r.get("similarity"), (int, float)) else ""
        return f"{r.get('kind')} duplicate [{ids}]{sim} -> {r.get('decision', '')}"
    if ev == "cost":
        sub = " (subagent)" if r.get("subagent") else ""
        return (f"task={r.get('task')} tool={r.get('tool')} agent={r.get('agent') or '-'}{sub} tokens={r.get('tokens', 0):,} "
                f"cost=${float(r.get('cost') or 0):.4f} calls={r.get('calls', 1)}")
    if ev == "budget_exceeded":
        return f"BUDGET EXCEEDED task={r.get('task') or '-'}: {r.get('detail', '')} (refused)"
    if ev == "cost_confirm":
        return f"task {r.get('task')} confirmed past its budget by {r.get('by')}"
    if ev == "blocked_write":
        return (f"blocked {r.get('action')} origin={r.get('origin')} agent={r.get('agent') or '-'} "
                f"rules={','.join(r.get('rules', []))} > {r.get('excerpt', '')}")
    if ev == "rejected":
        return f"rejected [{ids}] on {r.get('branch')}: {r.get('reason', '')}"
    if ev == "scope_merge_blocked":
        return f"subagent {r.get('scope')} merge BLOCKED [{ids}] rules={','.join(r.get('rules', []))}"
    if ev == "scope_merge":
        return f"subagent {r.get('scope')} merged [{ids}] into provisional (pending review)"
    if ev == "external_write":
        return f"external_tool write [{ids}] agent={r.get('agent') or '-'} commit {str(r.get('commit'))[:10]} -> {r.get('decision')}"
    return f"{ev} {ids}".strip()


def health(repo: MemRepo, expiring_days: float = 7.0, now: float | None = None) -> dict[str, Any]:
    """Cap usage per scope, entries expiring soon, pending reviews, open conflicts."""
    from .curate import expiring_within
    from .review import review
    from .write import usage

    policy = repo.policy()
    verified = repo.store.branch_snapshot(repo.verified_branch)
    provisional = repo.store.branch_snapshot(repo.provisional_branch)
    items = review(repo)
    pending_ids = {it.id for it in items}
    conflicts = [r for r in read_audit(repo, "conflict") if r.get("kind") != "origin"]
    open_conflicts = [r for r in conflicts if set(r.get("ids", [])) & pending_ids]
    flagged = [{"id": it.id, "rule": f.rule, "message": f.message} for it in items for f in it.findings
               if f.rule.startswith("conflict.")]
    subagents = {}
    from .subagent import list_scopes

    for s in list_scopes(repo):
        if repo.store.tip(s["branch"]) is not None:
            subagents[s["name"]] = len(review(repo, s["branch"]))
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now if now is not None else time.time())),
        "caps": {"verified": usage(repo, policy, verified), "provisional": usage(repo, policy, provisional)},
        "expiring": expiring_within(repo, provisional, expiring_days, now),
        "expiring_days": expiring_days,
        "pending_reviews": len(items),
        "pending": [{"id": it.id, "kind": it.kind, "scope": it.scope, "change": it.change, "origin": it.origin,
                     "blocked": any(f.blocking for f in it.findings)} for it in items],
        "subagent_pending": subagents,
        "open_conflicts": open_conflicts,
        "flagged_in_review": flagged,
    }


def _md_table(records: list[dict[str, Any]], title: str, intro: str) -> str:
    lines = [f"# {title}", "", intro, "", "Generated by `memrepo report` from git; do not edit.", ""]
    if not records:
        return "\n".join(lines + ["No records.", ""])
    lines += ["| time | event | what |", "|---|---|---|"]
    for r in records:
        what = describe(r).replace("|", "\\|").replace("\n", " ")
        lines.append(f"| {r.get('time', '')} | {r.get('event', '')} | {what} |")
    return "\n".join(lines) + "\n"


INTROS = {
    "conflict": ("CONFLICT_LOG", "Fact overwrites, tag conflicts, conclusion conflicts and origin conflicts, with the decision taken."),
    "duplicate": ("DUPLICATE_LOG", "Exact duplicates (no-ops), near duplicates (flagged) and merges proposed by `memrepo curate`."),
    "integrity": ("MEMORY_INTEGRITY_LOG", "External writes, blocked writes (injections found), rejections and subagent merges."),
    "cost": ("COST_LOG", "Calls, tokens and cost per task, tool and agent; budgets crossed and confirmations."),
}


def health_markdown(h: dict[str, Any]) -> str:
    lines = ["# Memory health", "", f"Generated {h['time']} by `memrepo report`.", "", "## Cap usage", "",
             "| scope | verified | provisional |", "|---|---|---|"]
    for scope in sorted(set(h["caps"]["verified"]) | set(h["caps"]["provisional"])):
        cells = []
        for side in ("verified", "provisional"):
            u = h["caps"][side].get(scope)
            cells.append(f"{u['used']:,}/{u['cap']:,} ({round(100 * u['used'] / u['cap'])}%), {u['entries']} entries"
                         if u and u["cap"] else "-")
        lines.append(f"| {scope} | {cells[0]} | {cells[1]} |")
    lines += ["", f"## Expiring within {h['expiring_days']:g} days", ""]
    lines += [f"- `{e['id']}` ({e['scope']}, ttl {e['ttl']}): {'EXPIRED' if e['expired'] else 'expires'} {e['expires']}"
              for e in h["expiring"]] or ["None."]
    lines += ["", f"## Pending reviews: {h['pending_reviews']}", ""]
    lines += [f"- `{p['id']}` {p['kind']} {p['change']} ({p['scope'] or '-'}, {p['origin'] or '-'})"
              + (" — BLOCKED by findings" if p["blocked"] else "") for p in h["pending"]] or ["None."]
    if h["subagent_pending"]:
        lines += [""] + [f"- subagent `{n}`: {c} unmerged change(s)" for n, c in sorted(h["subagent_pending"].items())]
    lines += ["", f"## Open conflicts: {len(h['open_conflicts'])}", ""]
    lines += [f"- {describe(r)}" for r in h["open_conflicts"]] or ["None."]
    if h["flagged_in_review"]:
        lines += ["", "Flagged in review:"] + [f"- `{f['id']}` {f['rule']}: {f['message']}" for f in h["flagged_in_review"]]
    return "\n".join(lines) + "\n"


def report(repo_or_path: MemRepo | str, out_dir: str | Path | None = None, *, expiring_days: float = 7.0,
           now: float | None = None) -> dict[str, Any]:
    """Write governance/*.md (the four logs and HEALTH.md); return the health summary and paths."""
    repo = MemRepo.open(repo_or_path)
    if out_dir is None:
        if repo.store.workdir is None:
            raise UsageError("a bare repository has no working tree for governance/", where=str(repo.path),
                             hint="give --out DIR")
        target = repo.store.workdir / "governance"
        _exclude(repo, "/governance/")
    else:
        target = Path(out_dir)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for kind in KINDS:
        path = target / FILES[kind]
        path.write_text(_md_table(governance_log(repo, kind), *INTROS[kind]), "utf-8")
        written.append(str(path))
    h = health(repo, expiring_days, now)
    (target / "HEALTH.md").write_text(health_markdown(h), "utf-8")
    written.append(str(target / "HEALTH.md"))
    return {"dir": str(target), "files": written, "health": h}


def _exclude(repo: MemRepo, pattern: str) -> None:
    info = repo.store.git_dir / "info"
    info.mkdir(exist_ok=True)
    exclude = info / "exclude"
    text = exclude.read_text("utf-8") if exclude.exists() else ""
    if pattern not in text.splitlines():
        exclude.write_text(text + ("" if text.endswith("\n") or not text else "\n") + pattern + "\n", "utf-8")
