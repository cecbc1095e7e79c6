"""memrepo: a git-native memory repository for AI agents.

``from memrepo import Memory`` gives the Python API (:mod:`memrepo.api`); it is imported on
first use, so ``import memrepo`` stays light for the CLI.
"""
from __future__ import annotations

from typing import Any

__all__ = ["Memory"]


def __getattr__(name: str) -> Any:
    if name == "Memory":
        from .api import Memory

        return Memory
    raise AttributeError(f"module 'memrepo' has no attribute {name!r}")
