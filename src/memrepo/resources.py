"""The default policies shipped in the wheel (top-level policies/ in a checkout)."""
from __future__ import annotations

from pathlib import Path


def default_policies_dir() -> Path:
    """The installed copy (``memrepo/_policies``), or the checkout's ``policies/`` in an editable install."""
    here = Path(__file__).resolve().parent
    packaged = here / "_policies"
    if packaged.is_dir():
        return packaged
    checkout = here.parent.parent / "policies"
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError("memrepo's default policies are missing from this installation")


def default_policy_files() -> dict[str, bytes]:
    """Every default policy file keyed by its path under ``policies/`` (e.g. ``rules/override.yaml``)."""
    root = default_policies_dir()
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
