"""check: a ref's tree, the change from --base REF, or given files, judged by the target's policy."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..errors import MemrepoError, NotARepository, UsageError
from ..findings import Finding
from ..gitstore import BLOB, LINK, FileBlob, Store
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


def check_change(repo_path: str | Store, base: str, head: str = "HEAD") -> CheckResult:
    """The change from ``base`` to ``head``, judged by the policy stored at ``base`` (the target)."""
    store = repo_path if isinstance(repo_path, Store) else Store.open(repo_path)
    base_snap, head_snap = store.snapshot(base), store.snapshot(head)
    policy = policy_of(base_snap, base)
    files = head_snap.files()
    changed = [c.path for c in diff_paths(base_snap, head_snap)]
    findings = tree_findings(files, policy, only=changed)
    for path in changed:
        if path.startswith(POLICY_DIR + "/"):
            findings.append(Finding("policy.changed", "error", "change to policies/ needs a human policy owner's review",
                                    path=path, hint="a policy owner must approve this change (code-owner review)",
                                    category="policy"))
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
    return CheckResult(tree_findings(files, policy, only=rels), source, rels)


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
