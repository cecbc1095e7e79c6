"""Memory-poisoning detector: normalisation, rule files, secrets, scoring, a learned classifier
(policies/models/injection.json, pure-Python inference) and the skill scan.

Public API: :class:`Scanner`, :class:`SkillFile`, :func:`default_scanner`, :func:`evaluate`.
"""
from __future__ import annotations

from typing import Any

from .scanner import Scanner, default_scanner

__all__ = ["Scanner", "SkillFile", "compiled", "default_scanner", "evaluate"]


def compiled() -> bool:
    """True when the scanner's modules were compiled to C (the opt-in mypyc build, see pyproject.toml)."""
    from importlib.machinery import EXTENSION_SUFFIXES

    from . import scanner

    return str(scanner.__file__).endswith(tuple(EXTENSION_SUFFIXES))


def __getattr__(name: str) -> Any:
    """The skill scan and the evaluator on first use: a memory write needs neither."""
    if name == "SkillFile":
        from .skill import SkillFile

        return SkillFile
    if name == "evaluate":
        from .evaluate import evaluate

        globals()["evaluate"] = evaluate  # importing the submodule bound its name to the module: rebind
        return evaluate
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
