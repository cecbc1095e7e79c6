"""check: a ref's tree, the change from --base REF, or given files, judged by the target's policy."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from ..errors import MemrepoError, NotARepository, UsageError
from ..findings import Finding
from ..gitstore import BLOB, LINK, FileBlob, Snapshot, Store
from ..policy.config import POLICY_DIR, Policy, default_policy, load_policy
from ..policy.files import tree_findings, unsafe_path_finding
from ..repo import MemRepo
from .pending import diff_paths


@dataclass
class CheckResult:
    findings: list[Finding]
    policy_source: str
    checked: list[str] = field(default_factory=list)

    @property
    def blocked(self) -> bool:
        return any(f.blocking for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        return {"findings": [f.to_json() for f in self.findings], "blocked": self.blocked,
                "policy": self.policy_source, "checked": len(self.checked)}


def check_ref(repo_path: str | MemRepo, rev: str | None = None) -> CheckResult:
    """The whole tree of a ref (default: provisional), judged by verified's policy."""
    repo = MemRepo.open(repo_path)
    snap = repo.store.snapshot(rev or repo.provisional_branch)
    policy = repo.policy()
    files = snap.files()
    return CheckResult(tree_findings(files, policy), policy.source, sorted(files))


REVIEW_MODES = ("record", "forge")


def check_change(repo_path: str | Store, base: str, head: str = "HEAD", *, review: str = "record") -> CheckResult:
    """The change from ``base`` to ``head``, judged by the policy stored at ``base`` (the target).

    Content, schema, caps and origin claims are always judged by the target's policy. Entries
    that may not reach verified directly and edits of policies/ need a review record in the
    range (``review="record"``: a plain git server, where the history is the only record); with
    ``review="forge"`` the forge's required and code-owner reviews are the human gate, so those
    findings are warnings that tell the reviewer what to look at.
    """
    if review not in REVIEW_MODES:
        raise UsageError(f"unknown review mode {review!r}", where="--review", hint=f"use one of: {', '.join(REVIEW_MODES)}")
    store = repo_path if isinstance(repo_path, Store) else Store.open(repo_path)
    base_snap, head_snap = store.snapshot(base), store.snapshot(head)
    return judge_change(store, base_snap, head_snap, policy_of(base_snap, base), review=review)


def judge_change(store: Store, base_snap: Snapshot, head_snap: Snapshot, policy: Policy, *,
                 review: str = "record") -> CheckResult:
    """Findings for base..head under ``policy`` (always the target's, never the change's own)."""
    from .records import review_findings

    changes = list(diff_paths(base_snap, head_snap))
    changed = [c.path for c in changes]
    findings = tree_findings(head_snap.files(), policy, only=changed)
    findings.extend(review_findings(store, base_snap, head_snap, changes, policy,
                                    severity="warning" if review == "forge" else "error"))
    return CheckResult(findings, policy.source, changed)


def policy_of(snap: Any, label: str) -> Policy:
    files = {p[len(POLICY_DIR) + 1:]: b.data for p, b in snap.files(POLICY_DIR).items()}
    if not files:
        raise UsageError(f"{label} has no policies/ folder", where=label,
                         hint="check against a branch of a memory repository (e.g. --base origin/verified)")
    return load_policy(files, source=label)


def check_files(repo_path: str, paths: Sequence[str]) -> CheckResult:
    """Files in the working tree (as pre-commit passes them), judged by verified's policy when there is one."""
    root = Path(repo_path)
    policy, source = _local_policy(root)
    files: dict[str, FileBlob] = {}
    rels = []
    for raw in paths:
        p = Path(raw)
        full = p if p.is_absolute() else root / p
        try:
            rel = full.resolve(strict=False).relative_to(root.resolve()).as_posix() if not full.is_symlink() \
                else full.parent.resolve().relative_to(root.resolve()).joinpath(full.name).as_posix()
        except ValueError:
            bad = unsafe_path_finding(raw if raw.startswith("/") else "../" + raw)
            return CheckResult([bad] if bad else [], source, [raw])
        rels.append(rel)
        if full.is_symlink():
            files[rel] = FileBlob(LINK, str(full.readlink()).encode())
        elif full.is_file():
            files[rel] = FileBlob(0o100755 if full.stat().st_mode & 0o111 else BLOB, full.read_bytes())
    # the tree-wide rules (caps, duplicate ids) need the neighbours of the touched files
    for rel in list(files):
        parent = (root / rel).parent
        if rel.startswith("memories/") and parent.is_dir():
            for sib in parent.glob("*.md"):
                key = sib.relative_to(root).as_posix()
                if key not in files and sib.is_file():
                    files[key] = FileBlob(BLOB, sib.read_bytes())
        if rel.startswith("skills/"):  # a skill is checked as a whole folder (issue 5)
            from .skills.disk import skill_folder_on_disk

            for key, blob in skill_folder_on_disk(root, rel).items():
                files.setdefault(key, blob)
        if rel.startswith(POLICY_DIR + "/") and (root / POLICY_DIR).is_dir():
            for sib in (root / POLICY_DIR).rglob("*"):
                key = sib.relative_to(root).as_posix()
                if key not in files and sib.is_file():
                    files[key] = FileBlob(BLOB, sib.read_bytes())
    findings = tree_findings(files, policy, only=rels)
    findings.extend(direct_write_findings(root, files, rels, policy))
    return CheckResult(findings, source, rels)


def direct_write_findings(root: Path, files: dict[str, FileBlob], rels: Sequence[str], policy: Policy) -> list[Finding]:
    """Committing by hand on a protected branch: only origins the policy lets go to verified directly."""
    from ..model.entry import parse_entry, path_scope_id

    branch = _checked_out_branch(root)
    if branch is None or branch not in protected_branches(policy, root):
        return []
    out = []
    for rel in rels:
        blob = files.get(rel)
        if blob is None or not path_scope_id(rel):
            continue
        try:
            origin = parse_entry(blob.data, rel).origin
        except MemrepoError:
            continue  # the parse finding is already there
        if not policy.origin_rule(origin).get("direct_to_verified"):
            out.append(Finding("origin.direct", "error", f"a {origin} entry committed straight to {branch}", path=rel,
                               category="origin", entry=rel.rsplit("/", 1)[-1][:-3],
                               hint="write it to provisional (`memrepo remember`) and have a person `memrepo promote` it"))
    return out


def _checked_out_branch(root: Path) -> str | None:
    try:
        store = Store.open(root)
        if store.repo.head_is_detached or store.repo.head_is_unborn:
            return None
        return store.repo.head.shorthand
    except (MemrepoError, pygit2.GitError):
        return None


def protected_branches(policy: Policy, root: Path | Store | None = None) -> list[str]:
    """verified (as configured in the repository, else by policy) and policy branches.protected."""
    names = [policy.verified_branch]
    store = root if isinstance(root, Store) else None
    if store is None and isinstance(root, Path):
        try:
            store = Store.open(root)
        except MemrepoError:
            store = None
    if store is not None:
        try:
            names.append(str(store.repo.config["memrepo.verified"]))
        except (KeyError, pygit2.GitError):
            pass
    names += [str(b) for b in (policy.data.get("branches") or {}).get("protected") or []]
    return list(dict.fromkeys(names))


def _local_policy(root: Path) -> tuple[Policy, str]:
    try:
        repo = MemRepo.open(root)
        policy = repo.policy()
        return policy, policy.source
    except (NotARepository, MemrepoError):
        pass
    local = root / POLICY_DIR
    if (local / "policy.yaml").is_file():
        files = {p.relative_to(local).as_posix(): p.read_bytes() for p in local.rglob("*") if p.is_file()}
        return load_policy(files, source="working tree"), "working tree:policies/"
    return default_policy(), "default"
