"""The content scanner: normalise, match rule files, find secrets, score what is left."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from ..errors import ParseError
from ..findings import Finding, escape_excerpt
from .needles import TextIndex, text_index
from .normalise import (
    Variant,
    canonical_chain,
    clean,
    decoded_payloads,
    hidden_html_spans,
    invisible_chars,
    is_bidi,
    scan_variants,
)
from .rules import Rule, RuleSet, load_rule_files
from .scoring import best_sentence
from .secrets import find_secrets, mask, secret_value

if TYPE_CHECKING:
    from .skill import SkillFile

DEFAULT_THRESHOLD = 5.0
MAX_DEPTH = 2  # payload inside payload (e.g. base64 inside a hidden HTML comment)


@dataclass(frozen=True)
class SkillLimits:
    max_file_bytes: int = 256 * 1024
    max_total_bytes: int = 2 * 1024 * 1024
    max_files: int = 200
    blob_min_chars: int = 200


class Scanner:
    """Scans text (memory entries) and skill folders for poisoning, secrets and unsafe commands.

    Build it once (``Scanner.from_policy_files`` or ``default_scanner()``) and reuse it: rules are
    compiled at construction.
    """

    def __init__(self, ruleset: RuleSet, *, max_entry_bytes: int = 65536, score_threshold: float = DEFAULT_THRESHOLD,
                 skill_limits: SkillLimits | None = None) -> None:
        self.ruleset = ruleset
        self.max_entry_bytes = max_entry_bytes
        self.score_threshold = score_threshold
        self.skill_limits = skill_limits or SkillLimits()
        self._text_rules = [r for r in ruleset.rules if not r.secret]
        self._secret_rules = [r for r in ruleset.rules if r.secret]

    @classmethod
    def from_policy_files(cls, files: Mapping[str, bytes]) -> Scanner:
        """Build a scanner from policy files keyed by their path under ``policies/``.

        ``policy.yaml``'s ``scan:`` section picks the rules folder, the entry cap, the scoring
        threshold and the skill limits; a bad rule file raises ParseError naming file:line.
        """
        scan = _scan_section(files)
        ruleset = load_rule_files(files, str(scan.get("rules_dir", "rules")))
        skill = scan.get("skill") or {}
        limits = SkillLimits(**{k: int(v) for k, v in skill.items() if k in SkillLimits.__dataclass_fields__})
        return cls(ruleset, max_entry_bytes=int(scan.get("max_entry_bytes", 65536)),
                   score_threshold=float(scan.get("score_threshold", DEFAULT_THRESHOLD)), skill_limits=limits)

    # -- text -------------------------------------------------------------------------------

    def scan_text(self, text: str, *, path: str = "", line: int = 1) -> list[Finding]:
        """Findings for ``text``; ``line`` is the line of the text's first line within ``path``."""
        found: dict[str, Finding] = {}
        if len(text) > self.max_entry_bytes or len(text.encode("utf-8", "surrogatepass")) > self.max_entry_bytes:
            found["scan.too-large"] = Finding(
                "scan.too-large", "warning", f"text is larger than {self.max_entry_bytes:,} bytes; only the start was scanned",
                path=path, line=line, hint="split the text into smaller entries", category="size")
            text = text.encode("utf-8", "surrogatepass")[: self.max_entry_bytes].decode("utf-8", "ignore")
        self._invisible(text, path, line, found)
        self._scan_variants(scan_variants(text), found, path, line, hidden=False)
        self._scan_payloads(text, found, path, line, depth=1)
        self._secrets(text, found, path, line)
        if not any(f.blocking for f in found.values()):
            self._score(text, found, path, line)
        return list(found.values())

    def scan_skill(self, files: Mapping[str, SkillFile]) -> list[Finding]:
        """Findings for a skill folder: ``files`` maps paths relative to the folder to SkillFile."""
        from .skill import scan_skill

        return scan_skill(self, files)

    def _scan_variants(self, variants: list[Variant], found: dict[str, Finding], path: str, line: int, *, hidden: bool) -> None:
        original = variants[0].text
        hidden_spans = [] if hidden else hidden_html_spans(original)
        for v in variants:
            lowered = v.text.lower()
            index = text_index(lowered)
            for rule in self._text_rules:
                if rule.id in found:
                    continue
                m = _first_match(rule, v.text, index)
                if m is None:
                    continue
                step = _revealing_step(rule, original, v.step)
                if step == "" and any(a <= m.start() < b for a, b in hidden_spans):
                    step = "html-hidden"
                at = line if hidden else line + v.text.count("\n", 0, m.start())
                found[rule.id] = Finding(rule.id, rule.severity, rule.message, path=path, line=at, hint=rule.hint,  # type: ignore[arg-type]
                                         category=rule.category, normalisation=step, excerpt=_excerpt(v.text, lowered, m))

    def _scan_payloads(self, text: str, found: dict[str, Finding], path: str, line: int, depth: int) -> None:
        for p in decoded_payloads(text):
            chain = [Variant(p.step + ("" if v.step == "" else "+" + v.step), v.text) for v in scan_variants(p.text)]
            self._scan_variants(chain, found, path, line, hidden=True)
            if depth < MAX_DEPTH:
                self._scan_payloads(p.text, found, path, line, depth + 1)
            if not any(f.blocking for f in found.values()):
                self._score_variant(chain[-1], found, path, line, bonus=self.ruleset.hidden_bonus)

    def _invisible(self, text: str, path: str, line: int, found: dict[str, Finding]) -> None:
        chars = invisible_chars(text)
        if not chars:
            return
        first_pos, _ = chars[0]
        kinds = sorted({_invisible_kind(ch) for _, ch in chars})
        found["obfuscation.invisible-chars"] = Finding(
            "obfuscation.invisible-chars", "error",
            f"{len(chars)} invisible or bidirectional control character(s) ({', '.join(kinds)})",
            path=path, line=line + text.count("\n", 0, first_pos),
            hint="remove zero-width, bidi and tag characters: they hide text from reviewers",
            category="obfuscation", normalisation="invisible",
            excerpt=escape_excerpt(text[max(0, first_pos - 20): first_pos + 40]),
            extra={"count": len(chars), "codepoints": sorted({f"U+{ord(c):04X}" for _, c in chars})[:10]})

    def _secrets(self, text: str, found: dict[str, Finding], path: str, line: int) -> None:
        base = clean(text)
        for rule in self._secret_rules:
            if rule.id in found:
                continue
            for m in rule.finditer(base, text_index(base.lower())):
                value = secret_value(m)
                if self.ruleset.is_placeholder(value):
                    continue
                found[rule.id] = Finding(rule.id, rule.severity, rule.message, path=path,  # type: ignore[arg-type]
                                         line=line + base.count("\n", 0, m.start()), hint=rule.hint, category=rule.category,
                                         excerpt=mask(m.group(0)))
                break
        for secret_type, plugin, m in find_secrets(base):
            value = secret_value(m)
            if self.ruleset.is_placeholder(value):
                continue
            rule_id = "secrets." + re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-")
            if rule_id in found:
                continue
            found[rule_id] = Finding(rule_id, "error", f"{secret_type} (detect-secrets {plugin})", path=path,
                                     line=line + base.count("\n", 0, m.start()),
                                     hint="store where the secret lives (a vault path or an env var name), never its value",
                                     category="secrets", excerpt=mask(value))

    def _score(self, text: str, found: dict[str, Finding], path: str, line: int) -> None:
        chain = canonical_chain(text)
        self._score_variant(chain[-1] if chain else Variant("", text), found, path, line, bonus=0.0)

    def _score_variant(self, v: Variant, found: dict[str, Finding], path: str, line: int, *, bonus: float) -> None:
        if "score.directive" in found or not self.ruleset.features:
            return
        best = best_sentence(v.text, self.ruleset.features, bonus)
        if best is None or best.score < self.score_threshold:
            return
        found["score.directive"] = Finding(
            "score.directive", "error",
            f"reads as an order to an AI about its rules, memory or credentials (score {best.score:g})",
            path=path, line=line + (0 if bonus else v.text.count("\n", 0, best.start)),
            hint="store facts with their origin ('the user prefers ...'), not orders to a future AI",
            category="scoring", normalisation=v.step, excerpt=escape_excerpt(best.sentence),
            extra={"score": best.score, "threshold": self.score_threshold, "features": list(best.features)})


def _revealing_step(rule: Rule, original: str, step: str) -> str:
    """Name the chain step that revealed a match first seen in a "clean" or "final" variant."""
    prefix, _, last = step.rpartition("+")
    if last not in ("clean", "final"):
        return step
    for v in canonical_chain(original):
        if _first_match(rule, v.text, text_index(v.text.lower())) is not None:
            return f"{prefix}+{v.step}" if prefix else v.step
    return f"{prefix}+{last}" if prefix else last


def _first_match(rule: Rule, text: str, index: TextIndex) -> re.Match[str] | None:
    for i, m in enumerate(rule.finditer(text, index)):
        if rule.unless is None:
            return m
        start = max(text.rfind(".", 0, m.start()), text.rfind("\n", 0, m.start())) + 1
        end_candidates = [e for e in (text.find(".", m.end()), text.find("\n", m.end())) if e >= 0]
        end = min(end_candidates) if end_candidates else len(text)
        if not rule.unless.search(text, start, end):
            return m
        if i >= 8:
            break
    return None


def _excerpt(text: str, lowered: str, m: re.Match[str]) -> str:
    """The matched span in the original case when lower-casing kept positions, else as matched."""
    if m.string is lowered and len(lowered) == len(text):
        return escape_excerpt(text[m.start(): m.end()])
    return escape_excerpt(m.group(0))


def _invisible_kind(ch: str) -> str:
    cp = ord(ch)
    if 0xE0000 <= cp <= 0xE007F:
        return "tag characters"
    if is_bidi(ch):
        return "bidi controls"
    return "zero-width"


def _scan_section(files: Mapping[str, bytes]) -> dict[str, Any]:
    from ..model.safeyaml import load_yaml

    data = files.get("policy.yaml")
    if data is None:
        return {}
    try:
        doc = load_yaml(data.decode("utf-8"), "policies/policy.yaml")
    except UnicodeDecodeError:
        raise ParseError("policy.yaml is not UTF-8", where="policies/policy.yaml", hint="re-save it as UTF-8") from None
    scan = (doc or {}).get("scan") if isinstance(doc, dict) else None
    if scan is None:
        return {}
    if not isinstance(scan, dict):
        raise ParseError("scan: must be a mapping", where="policies/policy.yaml", hint="see policies/schemas/policy.schema.json")
    for key in ("max_entry_bytes", "score_threshold"):
        if key in scan and (isinstance(scan[key], bool) or not isinstance(scan[key], (int, float))):
            raise ParseError(f"scan.{key} must be a number", where="policies/policy.yaml", hint="e.g. 65536 or 6.5")
    skill = scan.get("skill")
    if skill is not None and (not isinstance(skill, dict) or any(isinstance(v, bool) or not isinstance(v, int) for v in skill.values())):
        raise ParseError("scan.skill must map limit names to integers", where="policies/policy.yaml",
                         hint="keys: max_file_bytes, max_total_bytes, max_files, blob_min_chars")
    return scan


@lru_cache(maxsize=1)
def default_scanner() -> Scanner:
    """The scanner built from memrepo's shipped default policies (cached)."""
    from ..resources import default_policy_files

    return Scanner.from_policy_files(default_policy_files())
