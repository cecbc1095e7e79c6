"""Memory-poisoning detector: normalisation, rule files, secrets, scoring, a learned classifier
(policies/models/injection.json, pure-Python inference) and the skill scan.

Public API: :class:`Scanner`, :class:`SkillFile`, :func:`default_scanner`, :func:`evaluate`.
"""
from __future__ import annotations

from .evaluate import evaluate
from .scanner import Scanner, default_scanner
from .skill import SkillFile

__all__ = ["Scanner", "SkillFile", "default_scanner", "evaluate"]
