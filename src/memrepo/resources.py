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


def hooks_manifest() -> bytes:
    """This project's ``.pre-commit-hooks.yaml`` (shipped in the wheel as templates/pre-commit-hooks.yaml)."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "templates" / "pre-commit-hooks.yaml", here.parent.parent / ".pre-commit-hooks.yaml"):
        if candidate.is_file():
            return candidate.read_bytes()
    raise FileNotFoundError("memrepo's .pre-commit-hooks.yaml is missing from this installation")
