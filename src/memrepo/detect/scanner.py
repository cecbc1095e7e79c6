"""The content scanner: normalise, match rule files, find secrets, score what is left."""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NamedTuple

from ..errors import ParseError
from ..findings import Finding, escape_excerpt
from .cache import cached, content_key
from .classifier import DEFAULT_MODEL, Model, load_model, prepare, tokens
from .needles import TextIndex, gc_paused, text_index
from .normalise import (
    CHAIN_STEPS,
    Variant,
    canonical_chain,
    clean,
    decoded_payloads,
    hidden_html_spans,
    invisible_chars,
    is_bidi,
    scan_variants,
)
from .rules import SPEC_VERSION, Branch, Rule, RuleSet, build_spec, ruleset_from_spec, search_branches
from .rxcache import compile_cached
from .scoring import best_sentence, drop_quoted
from .secrets import VALIDATORS, find_secrets, mask, secret_value

if TYPE_CHECKING:
    from .skill import SkillFile

DEFAULT_THRESHOLD = 6.0
MAX_DEPTH = 2  # payload inside payload (e.g. base64 inside a hidden HTML comment)
_HIDING_STEPS = {"rot13": "in rot13", "reversed": "backwards"}
MIN_VETO_FEATURES = 8  # a low probability from fewer known features is ignorance, not confidence
MIN_KNOWN_WORDS = 0.5  # nor from a window where fewer than half the words are known (Verdict.known_words)
MIN_HIDDEN_WORDS = 5  # a decoded run this long is a sentence, not a coincidence
MIN_CLASSIFIER_WORDS = 5  # the learned layer alone never blocks a window with fewer plain words (letters only) than this
# The steps of the entry's own text (canonical_chain): the learned layer reads the same text there, so
# a score.directive found in it may need the learned layer's agreement (scan.score_model_floor);
# in decoded or hidden text (base64, html-hidden ...) it never does.
_OWN_TEXT_STEPS = frozenset(("", *CHAIN_STEPS))


class SkillLimits(NamedTuple):
    """Skill folder limits: the skill model's caps (policy ``skills:``) plus the scan's own."""

    skill_md_max_bytes: int = 65536  # skills.skill_md_max_bytes
    max_file_bytes: int = 1048576  # skills.file_max_bytes
    max_files: int = 100  # skills.max_files
    max_total_bytes: int = 2 * 1024 * 1024  # scan.skill.max_total_bytes
    blob_min_chars: int = 200  # scan.skill.blob_min_chars


# policy.yaml `skills:` keys the skill scan shares with the skill model, and their SkillLimits names.
_SKILLS_CAPS = {"skill_md_max_bytes": "skill_md_max_bytes", "file_max_bytes": "max_file_bytes", "max_files": "max_files"}


class Scanner:
    """Scans text (memory entries) and skill folders for poisoning, secrets and unsafe commands.

    Build it once (``Scanner.from_policy_files`` or ``default_scanner()``) and reuse it. Building
    is cheap: the rule files' parsed form is cached on disk by content hash, and each pattern is
    compiled the first time a text holds its required literals.
    """

    def __init__(self, ruleset: RuleSet, *, max_entry_bytes: int = 65536, score_threshold: float = DEFAULT_THRESHOLD,
                 skill_limits: SkillLimits | None = None, model: Model | None = None,
                 veto_targets: tuple[str, ...] = (), quoted: QuotedExamples | None = None,
                 score_model_floor: float | None = None, veto_never: str = "") -> None:
        self.ruleset = ruleset
        self.max_entry_bytes = max_entry_bytes
        self.score_threshold = score_threshold
        self.skill_limits = skill_limits or SkillLimits()
        self.model = model
        self.veto_targets = veto_targets  # scan.model_veto: categories and rule ids
        self.score_model_floor = score_model_floor  # scan.score_model_floor
        self.veto_never = veto_never  # scan.model_veto_never: an alternation, compiled on first use
        self.quoted = quoted

    @classmethod
    def from_policy_files(cls, files: Mapping[str, bytes]) -> Scanner:
        """Build a scanner from policy files keyed by their path under ``policies/``.

        ``policy.yaml``'s ``scan:`` section picks the rules folder, the entry cap, the scoring
        threshold, the classifier model and the skill limits (with ``skills:`` caps); a bad rule
        file raises ParseError naming file:line.
        """
        key = content_key(f"scanner-spec-{SPEC_VERSION}", [(n, files[n]) for n in sorted(files) if not n.startswith("models/")])
        with gc_paused():  # tens of thousands of small objects: collections in between only cost time
            spec = cached("scanner", key, lambda: _build_spec(files))
            settings = spec["settings"]
            model = None
            if settings["model"]:
                model = load_model(files, settings["model"], settings["model_threshold"])
            ruleset = ruleset_from_spec(spec["rules"])
        return cls(ruleset, max_entry_bytes=settings["max_entry_bytes"],
                   score_threshold=settings["score_threshold"], skill_limits=SkillLimits(**settings["skill_limits"]),
                   model=model, veto_targets=tuple(settings["model_veto"]),
                   quoted=QuotedExamples.from_settings(settings.get("quoted_examples")),
                   score_model_floor=settings.get("score_model_floor"),
                   veto_never=_alternation(settings.get("model_veto_never") or ()))

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
        quoted: dict[str, Finding] = {}
        self._scan_variants(scan_variants(text), found, path, line, hidden=False, quoted=quoted)
        self._scan_quoted_payloads(text, found, path, line, quoted)
        self._secrets(text, found, path, line)
        if not any(f.blocking for f in found.values()):
            self._score(text, found, path, line)
        self._veto(text, found)
        found.update((k, f) for k, f in quoted.items() if k not in found)
        return list(found.values())

    def vetoable(self, f: Finding) -> bool:
        """A match in the raw text of a category or rule listed in ``scan.model_veto``, unless its
        excerpt is one ``scan.model_veto_never`` names (the phrase itself, whatever the framing)."""
        return (f.category in self.veto_targets or f.rule in self.veto_targets) and f.normalisation == "" and not (
            self.veto_never and compile_cached(self.veto_never, re.IGNORECASE).search(f.excerpt))

    def veto_level(self, f: Finding) -> float | None:
        """The probability below which the learned layer demotes the blocking finding ``f`` (None: never).

        ``scan.model_veto`` findings: the model's ``veto``. A score.directive in the entry's own text:
        at least ``scan.score_model_floor`` too, since two weak layers must agree there (on heldout49-56,
        never trained on, the scoring layer alone blocked 9 benign texts, all below p 0.25, and 2 attacks,
        neither below it)."""
        if self.model is None:
            return None
        level = self.model.veto if self.vetoable(f) else None
        if self.score_floored(f):
            level = max(level or 0.0, self.score_model_floor or 0.0)
        return level

    def score_floored(self, f: Finding) -> bool:
        """A score.directive in the entry's own text: it needs the learned layer's agreement (``scan.score_model_floor``)."""
        return f.rule == "score.directive" and self.score_model_floor is not None and f.normalisation in _OWN_TEXT_STEPS

    def _veto(self, text: str, found: dict[str, Finding]) -> None:
        """Demote findings to warnings when the classifier reads the text as benign (see ``veto_level``).

        Only the categories and rule ids listed in ``scan.model_veto`` (matches in the raw text) and the
        scoring layer's own-text findings qualify: an obfuscated match, a secret or a command pattern is
        never demoted, nor anything when another finding blocks anyway."""
        if self.model is None:
            return
        levels = {k: level for k, f in found.items() if f.blocking and (level := self.veto_level(f)) is not None}
        if not levels or any(f.blocking and k not in levels for k, f in found.items()):
            return
        chain = canonical_chain(text)
        judged = chain[-1].text if chain else text
        seen = prepare(judged)
        if not all(_read_by_model(found[k], seen, judged.lower()) for k in levels):
            return  # a match the classifier never saw, or whose sentence it saw only in part, is not its to excuse
        verdict = self.model.best_window(judged)
        if verdict is None or len(verdict.features) < MIN_VETO_FEATURES or verdict.known_words < MIN_KNOWN_WORDS:
            return  # the model knows too few of these words (often: a language it was not trained on) to excuse anything
        p = verdict.probability
        for k, level in levels.items():
            if p < level:
                f = found[k]
                found[k] = replace(f, severity="warning", extra={**(f.extra or {}), "demoted_by": "classifier",
                                                                 "probability": round(p, 4), "veto_below": level})

    def scan_skill(self, files: Mapping[str, SkillFile]) -> list[Finding]:
        """Findings for a skill folder: ``files`` maps paths relative to the folder to SkillFile."""
        from .skill import scan_skill

        return scan_skill(self, files)

    def _scan_variants(self, variants: list[Variant], found: dict[str, Finding], path: str, line: int, *, hidden: bool,
                       quoted: dict[str, Finding] | None = None) -> None:
        """Pattern findings of each variant. ``quoted`` (visible text only) collects matches that
        sit inside quotation marks of a text that says it quotes an example: warnings, kept apart
        so that another variant's unquoted match of the same rule still counts."""
        original = variants[0].text
        hidden_spans = [] if hidden else hidden_html_spans(original)
        qx = self.quoted if quoted is not None else None
        for v in variants:
            lowered = v.text.lower()
            index = text_index(lowered)
            for rule, branches in self.ruleset.matching(index, v.text, secret=False):
                if rule.id in found:
                    continue
                skip = qx.skip if qx is not None and rule.category in qx.categories else None
                m, was_quoted = _first_match(rule, v.text, index, branches, skip, qx.enacted if qx is not None else None)
                if m is None:
                    continue
                step = _revealing_step(rule, original, v.step)
                if step == "" and any(a <= m.start() < b for a, b in hidden_spans):
                    step = "html-hidden"
                at = line if hidden else line + v.text.count("\n", 0, m.start())
                finding = Finding(rule.id, rule.severity, rule.message, path=path, line=at, hint=rule.hint,  # type: ignore[arg-type]
                                  category=rule.category, normalisation=step, excerpt=_excerpt(v.text, lowered, m))
                if was_quoted and quoted is not None:
                    quoted.setdefault(rule.id, replace(finding, severity="warning", extra={"quoted_example": True}))
                else:
                    found[rule.id] = finding

    def _scan_quoted_payloads(self, text: str, found: dict[str, Finding], path: str, line: int,
                              quoted: dict[str, Finding]) -> None:
        """Payloads (hidden HTML, base64 ...) of ``text``. Those that sit inside the quotation marks of a
        text that names them examples ("a README hid '<!-- AI: ignore your instructions -->'") are
        shown, not hidden: their findings of the quoted-example categories, and the learned and scoring
        layers' (which never read quoted text), become warnings as visible quoted matches do. A secret
        or a command found in them still blocks."""
        payloads = decoded_payloads(text)
        if not payloads:
            return  # most texts: nothing encoded, nothing more to look at
        qx = self.quoted
        outside = qx.unquoted(text) if qx is not None else text
        if qx is None or outside is text:
            self._scan_payloads(text, found, path, line, depth=1, payloads=payloads)
            return
        shown = decoded_payloads(outside)
        self._scan_payloads(outside, found, path, line, depth=1, payloads=shown)
        inside: dict[str, Finding] = {}
        self._scan_payloads(text, inside, path, line, depth=1, payloads=[p for p in payloads if p not in shown])
        soft = qx.categories | {"scoring", "classifier", "obfuscation"}
        for k, f in inside.items():
            if k in found:
                continue
            if f.category in soft:
                quoted.setdefault(k, replace(f, severity="warning", extra={**(f.extra or {}), "quoted_example": True}))
            else:
                found[k] = f

    def _scan_payloads(self, text: str, found: dict[str, Finding], path: str, line: int, depth: int,
                       payloads: list[Variant] | None = None) -> None:
        """Scan each payload decoded from ``text`` (``payloads``: already decoded), and theirs in turn."""
        for p in decoded_payloads(text) if payloads is None else payloads:
            if p.step in _HIDING_STEPS and "obfuscation.encoded-text" not in found and len(tokens(p.text)) >= MIN_HIDDEN_WORDS:
                # nobody writes a memory backwards or in rot13 but to hide it from the reader
                found["obfuscation.encoded-text"] = Finding(
                    "obfuscation.encoded-text", "error", f"text written {_HIDING_STEPS[p.step]} reads as language once decoded",
                    path=path, line=line, hint="write the memory in plain text; a reviewer must be able to read what is stored",
                    category="obfuscation", normalisation=p.step, excerpt=escape_excerpt(p.text[:120]))
            chain = [Variant(p.step + ("" if v.step == "" else "+" + v.step), v.text) for v in scan_variants(p.text)]
            self._scan_variants(chain, found, path, line, hidden=True)
            self._secrets(p.text, found, path, line, step=p.step, hidden=True)  # a base64'd password is still stored
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

    def _secrets(self, text: str, found: dict[str, Finding], path: str, line: int, *, step: str = "",
                 hidden: bool = False) -> None:
        """Secret rules and detect-secrets' plugins; ``step``: the decoder that revealed ``text``
        (its lines are not the entry's: ``hidden`` findings carry the entry's line)."""
        base = clean(text)
        index = text_index(base.lower())
        for rule, branches in self.ruleset.matching(index, base, secret=True):
            if rule.id in found:
                continue
            for m in rule.finditer(base, index, branches):
                value = secret_value(m)
                if self.ruleset.is_placeholder(value) or rule.validate and not VALIDATORS[rule.validate](value):
                    continue
                found[rule.id] = Finding(rule.id, rule.severity, rule.message, path=path,  # type: ignore[arg-type]
                                         line=line + (0 if hidden else base.count("\n", 0, m.start())), hint=rule.hint,
                                         category=rule.category, normalisation=step, excerpt=mask(m.group(0)))
                break
        for secret_type, plugin, m in find_secrets(base):
            value = secret_value(m)
            if self.ruleset.is_placeholder(value):
                continue
            rule_id = "secrets." + _NOT_ID_RE.sub("-", secret_type.lower()).strip("-")
            if rule_id in found:
                continue
            found[rule_id] = Finding(rule_id, "error", f"{secret_type} (detect-secrets {plugin})", path=path,
                                     line=line + (0 if hidden else base.count("\n", 0, m.start())), normalisation=step,
                                     hint="store where the secret lives (a vault path or an env var name), never its value",
                                     category="secrets", excerpt=mask(value))

    def _score(self, text: str, found: dict[str, Finding], path: str, line: int) -> None:
        chain = canonical_chain(text)
        self._score_variant(chain[-1] if chain else Variant("", text), found, path, line, bonus=0.0)

    def _score_variant(self, v: Variant, found: dict[str, Finding], path: str, line: int, *, bonus: float) -> None:
        self._classify(v, found, path, line, hidden=bool(bonus))
        if "score.directive" in found or not self.ruleset.features:
            return
        best = best_sentence(v.text, self.ruleset.features, bonus, needles=self.ruleset.needle_index,
                             floor=self.score_threshold)
        if best is None or best.score < self.score_threshold:
            return
        outside = self._outside_examples(v.text, hidden=bool(bonus))
        quoted = outside is not None and (
            (again := best_sentence(outside, self.ruleset.features, bonus, needles=self.ruleset.needle_index,
                                    floor=self.score_threshold)) is None or again.score < self.score_threshold)
        found["score.directive"] = Finding(
            "score.directive", "warning" if quoted else "error",
            f"reads as an order to an AI about its rules, memory or credentials (score {best.score:g})",
            path=path, line=line + (0 if bonus else v.text.count("\n", 0, best.start)),
            hint="store facts with their origin ('the user prefers ...'), not orders to a future AI",
            category="scoring", normalisation=v.step, excerpt=escape_excerpt(best.sentence),
            extra={"score": best.score, "threshold": self.score_threshold, "features": list(best.features),
                   **({"quoted_example": True} if quoted else {})})

    def _outside_examples(self, text: str, *, hidden: bool) -> str | None:
        """``text`` with the quotations it disowns blanked (see QuotedExamples.disowned): a security
        note that quotes an attack in full ("One said: '<the attack>'. It is phishing; report it.") is
        judged by the learned and scoring layers on its own words. None for hidden text and texts
        without such quotations."""
        if hidden or self.quoted is None:
            return None
        outside = self.quoted.disowned(text)
        return None if outside is text else outside


    def _classify(self, v: Variant, found: dict[str, Finding], path: str, line: int, *, hidden: bool) -> None:
        if self.model is None or "classifier.injection" in found:
            return
        verdict = self.model.best_window(v.text)
        if verdict is None or verdict.probability < self.model.threshold:
            return
        if sum(t.isalpha() for t in tokens(verdict.excerpt)) < MIN_CLASSIFIER_WORDS:
            # too little language for a learned verdict alone: "B wrote this" scored 0.94, and a list of
            # identifiers ("The permission359 meeting326 config896 …") up to 0.97; rules still apply
            return
        names = ", ".join(f for f, _ in verdict.top[:3])
        outside = self._outside_examples(v.text, hidden=hidden)
        quoted = outside is not None and (
            (again := self.model.best_window(outside)) is None or again.probability < self.model.threshold)
        found["classifier.injection"] = Finding(
            "classifier.injection", "warning" if quoted else "error",
            f"the learned classifier reads this as an injection (p={verdict.probability:.2f}; top features: {names})",
            path=path, line=line + (0 if hidden else v.text.count("\n", 0, verdict.start)),
            hint="store facts with their origin ('the user prefers ...'), not orders to a future AI",
            category="classifier", normalisation=v.step, excerpt=escape_excerpt(verdict.excerpt),
            extra={"probability": round(verdict.probability, 4), "threshold": self.model.threshold,
                   "features": [list(t) for t in verdict.top], **({"quoted_example": True} if quoted else {})})


def _read_by_model(f: Finding, seen: str, lowered: str) -> bool:
    """Whether the learned layer read ``f``'s excerpt and the rest of its sentence: the excerpt is in
    ``seen`` (the text as the model reads it: lower-cased, short quotations blanked), and no quotation
    of that sentence was blanked (``lowered``: the text lower-cased, unblanked). 'Note to the AI reading
    this: "<order>" (a fake example)' is an order the model never read, whatever the words around it say.
    A scoring-layer excerpt is a whole sentence, cut at 120 characters, whose short quotations the
    scoring layer blanked too before it scored them."""
    excerpt = f.excerpt
    if not excerpt:
        return False
    if f.rule == "score.directive":
        excerpt = drop_quoted(excerpt.removesuffix("…"))
    at = seen.find(excerpt.lower())
    if at < 0:
        return False
    if f.rule == "score.directive" or len(lowered) != len(seen):
        return True
    start, end = _sentence_around(seen, at, at + len(excerpt))
    return seen[start:end] == lowered[start:end]


def _revealing_step(rule: Rule, original: str, step: str) -> str:
    """Name the chain step that revealed a match first seen in a "clean" or "final" variant."""
    prefix, _, last = step.rpartition("+")
    if last not in ("clean", "final"):
        return step
    for v in canonical_chain(original):
        if _first_match(rule, v.text, text_index(v.text.lower()))[0] is not None:
            return f"{prefix}+{v.step}" if prefix else v.step
    return f"{prefix}+{last}" if prefix else last


def _first_match(rule: Rule, text: str, index: TextIndex, branches: tuple[Branch, ...] | None = None,
                 skip: Callable[[re.Match[str], Rule, tuple[Branch, ...] | None], bool] | None = None,
                 enacted: Callable[[re.Match[str]], bool] | None = None) -> tuple[re.Match[str] | None, bool]:
    """The first match not excused by the rule's ``unless``; a match ``skip`` excuses (a quoted
    example) is returned with True only when no other match is left. ``enacted``: true of a quoted
    match whose text tells the reader to act on the quotation, which no ``unless`` excuses."""
    fallback = None
    for i, m in enumerate(rule.finditer(text, index, branches)):
        if i > 8:
            break
        if rule.unless is not None or rule.unless_before is not None:
            start, end = _sentence_around(text, m.start(), m.end())
            if (rule.unless is not None and rule.unless.search(text, start, end)
                    or rule.unless_before is not None and rule.unless_before.search(text, _sentence_start(text, start - 1), end)) \
                    and not (enacted is not None and enacted(m)):
                continue
        if skip is not None and skip(m, rule, branches):
            fallback = fallback or m
            continue
        return m, False
    return fallback, fallback is not None


class QuotedExamples(NamedTuple):
    """``scan.quoted_examples``: a match of these categories inside quotation marks, in a text
    whose words outside the quotes name it an example (``cues``) or disown it (``disown_cues``),
    is quoted, not ordered."""

    categories: frozenset[str]
    cue_source: str  # compiled on first use: most scans never meet a quoted match
    enact_source: str = ""  # words outside the quotes that tell the reader to act on them ("Follow it.")
    disown_source: str = ""  # words outside the quotes that judge them an attack or not to be acted on

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any] | None) -> QuotedExamples | None:
        if not raw or not raw.get("categories") or not raw.get("cues"):
            return None
        return cls(frozenset(raw["categories"]), _alternation(raw["cues"]), _alternation(raw.get("enact_cues") or ()),
                   _alternation(raw.get("disown_cues") or ()))

    @property
    def cues(self) -> re.Pattern[str]:
        return compile_cached(self.cue_source, re.IGNORECASE)

    def skip(self, m: re.Match[str], rule: Rule, branches: tuple[Branch, ...] | None) -> bool:
        """``m`` lies inside an example quotation, or straddles one's edge and ``rule`` matches the
        quotation's own words alone: the label before it is part of the match ('a fake memory note:
        "Remember permanently: …"'). A match that needs words outside the quotation is not excused."""
        spans = self.example_spans(m.string)
        if _inside(m, spans):
            return True
        return any(a < m.end() and m.start() < b and search_branches(branches or rule.branches, m.string[a + 1: b - 1])
                   for a, b in spans)

    def _enacts(self, outside: str) -> bool:
        """The words outside the quotes tell the reader to act on the quotation."""
        return bool(self.enact_source) and compile_cached(self.enact_source, re.IGNORECASE).search(outside) is not None

    def _disowns(self, outside: str) -> bool:
        """The words outside the quotes judge the quotation an attack or not to be acted on: a
        quotation so judged is quoted whatever else the note calls it ("a PDF had hidden text saying
        '...'; don't act on it")."""
        return bool(self.disown_source) and compile_cached(self.disown_source, re.IGNORECASE).search(outside) is not None

    def enacted(self, m: re.Match[str]) -> bool:
        """``m`` sits inside quotation marks and the words outside them enact the quotation
        ("Example: '...'. Please act on it now.")."""
        spans = _quote_spans(m.string)
        return bool(self.enact_source) and _inside(m, spans) and self._enacts(_outside(m.string, spans))

    def example_spans(self, text: str) -> list[tuple[int, int]]:
        """The quoted spans of ``text`` when its words outside them name it an example, else []."""
        spans = _quote_spans(text)
        if not spans:
            return []
        outside = _outside(text, spans)
        # a cue word inside a link or host name ("handbook.example.com") names nothing
        outside = _LINK_RE.sub(" ", outside)
        if sum(map(str.isalnum, outside)) < MIN_OUTSIDE_CHARS or (self.cues.search(outside) is None
                                                                   and not self._disowns(outside)):
            return []
        # "For example: '<order>'. Follow it from today." names an example and then enacts it
        if self._enacts(outside):
            return []
        return _merge_lists(text, spans)

    def unquoted(self, text: str) -> str:
        """``text`` with its example quotations blanked (same length): what payloads are decoded from."""
        return _blanked(text, self.example_spans(text))

    def disowned(self, text: str) -> str:
        """``text`` with the quotations its own words disown blanked (same length), else ``text``: what
        the learned and scoring layers judge. Stricter than ``example_spans``, as those layers have no
        categories to spare: quotations of a sentence's length in quotation marks only (inline code is
        a command, a short quotation a name the model already reads past), and the words outside must
        judge the quotation (``disown_cues``: "phishing", "don't act on it"), not merely name it an
        example or an advisory."""
        if not self.disown_source:
            return text
        spans = [(a, b) for a, b in _quote_spans(text) if text[a] != "`" and _sentence_like(text[a + 1: b - 1])]
        if not spans:
            return text
        outside = _LINK_RE.sub(" ", _outside(text, spans))
        if sum(map(str.isalnum, outside)) < MIN_OUTSIDE_CHARS or self._enacts(outside) or not self._disowns(outside):
            return text
        return _blanked(text, _merge_lists(text, spans))


def _sentence_like(quotation: str) -> bool:
    """Five words or more, or 12+ characters of a script written without spaces: a quoted sentence
    the learned layers may read past, not a quoted name or label ('withdrawn by applicant')."""
    words = quotation.split()
    return len(words) >= 5 or len(words) == 1 and len(quotation.strip()) >= 12


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with ``spans`` replaced by spaces (same length); ``text`` itself when there are none."""
    if not spans:
        return text
    parts, last = [], 0
    for a, b in spans:
        parts += [text[last:a], " " * (b - a)]
        last = b
    return "".join([*parts, text[last:]])


def _alternation(patterns: Iterable[str]) -> str:
    """One regular expression matching any of ``patterns``."""
    return "|".join(f"(?:{p})" for p in patterns)


def _inside(m: re.Match[str], spans: list[tuple[int, int]]) -> bool:
    """``m`` lies strictly inside one of the quoted ``spans`` (quotation marks included in a span)."""
    return any(a < m.start() and m.end() < b for a, b in spans)


def _outside(text: str, spans: list[tuple[int, int]]) -> str:
    """The words of ``text`` outside the quoted ``spans`` (in order, quotation marks dropped)."""
    return "".join(text[b: a] for (_, b), (a, _) in pairwise([(0, 0), *spans, (len(text), len(text))]))


# Links, e-mail addresses and host names: their words are not the text's own ("example.com").
_LINK_RE = compile_cached(r"\S+://\S*|\bwww\.\S+|\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+"
                          r"|\b(?:[\w-]+\.)+(?:com|org|net|edu|gov|io|co|dev|app|ai|info|biz|xyz|cloud|example|test|local|"
                          r"internal|corp|lan|uk|de|fr|es|it|nl|eu|us|ca|au|in|jp|cn|ru|br|ch|se|no|dk|fi|pl|cz|at|be|ie|nz|za|"
                          r"sg|hk|kr|tw|mx|tr|il|ae|sa|ng|ke|pk|bd|id|my|ph|vn|th|ua|ro|gr|pt|hu)\b(?:/\S*)?", re.IGNORECASE)

# What separates the items of a list of quotations: 'you are now', 'from now on' or 'send to'.
_LIST_GAP_RE = compile_cached(r"[\s,;/、，]*(?:(?:or|and|oder|und|ou|et|o|y|e|或|和|及)[\s,;/、，]*)?")


def _merge_lists(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``spans`` with each list of quotations joined into one span: a match that runs from one
    listed phrase into the next ("from now on', 'send") is as quoted as each phrase."""
    merged = [spans[0]]
    for a, b in spans[1:]:
        if _LIST_GAP_RE.fullmatch(text, merged[-1][1], a):
            merged[-1] = (merged[-1][0], b)
        else:
            merged.append((a, b))
    return merged


# A sentence ends at a newline, at 。！？ or at . ! ? followed by a space or the end: not at the dots of
# "raw.githubusercontent.com", ".env" or "3.11".
_SENTENCE_END_RE = compile_cached(r"[.!?](?=\s|$)|[。！？\n]")
_NOT_ID_RE = compile_cached(r"[^a-z0-9]+")  # a secret type's name to a rule id


def _sentence_around(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the sentence(s) holding ``text[start:end]``: where a rule's ``unless`` is looked for."""
    stop = _SENTENCE_END_RE.search(text, end)
    return _sentence_start(text, start), stop.start() if stop else len(text)


def _sentence_start(text: str, end: int) -> int:
    """Where the sentence holding position ``end`` begins: after the last sentence end before it (0 if none).
    ``_sentence_start(text, begin - 1)`` of a sentence starting at ``begin`` is where the one before it starts."""
    begin = 0
    for m in _SENTENCE_END_RE.finditer(text, 0, max(0, end)):
        begin = m.end()
    return begin


MIN_OUTSIDE_CHARS = 12  # a text that is all quotation (or nearly) is not a note about one
_QUOTE_SPAN_SOURCE = (r"`[^`\n]{1,400}`|“[^”\n]{1,400}”|„[^“”\n]{1,400}[“”]|«[^»\n]{1,400}»|「[^」\n]{1,400}」|『[^』\n]{1,400}』"
                      r"|\"[^\"\n]{1,400}\"|‘[^’\n]{1,400}’|‚[^‘’'\n]{1,400}[‘’']"
                      r"|(?:(?<!\w)|(?<=[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]))'(?:[^'\n]|(?<=\w)'(?=\w)){1,400}'(?:(?!\w)|(?=[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]))")
# (inline code quotes as quotation marks do: "quote attack strings in code blocks (e.g. `Ignore previous …`)";
# German opens with ‚ and closes with ‘ or, typed, an apostrophe; a CJK or Korean character may stand right before an opening or after a closing quote: 出现'…'之类,
# '…'는, '…'という; an apostrophe between letters, as in 'the user's files', does not close a quote)


@lru_cache(maxsize=64)
def _quote_spans(text: str) -> list[tuple[int, int]]:
    # compiled on first use (~4 ms): most processes never meet a quoted match
    return [m.span() for m in compile_cached(_QUOTE_SPAN_SOURCE).finditer(text)]


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


def _build_spec(files: Mapping[str, bytes]) -> dict[str, Any]:
    doc = _policy_doc(files)
    scan = _scan_section(doc)
    raw_skills = doc.get("skills")
    skills: dict[str, Any] = raw_skills if isinstance(raw_skills, dict) else {}
    limits = {k: int(v) for k, v in (scan.get("skill") or {}).items() if k in SkillLimits._fields}
    limits.update({ours: int(skills[theirs]) for theirs, ours in _SKILLS_CAPS.items()
                   if isinstance(skills.get(theirs), int) and not isinstance(skills.get(theirs), bool)})
    settings = {"max_entry_bytes": int(scan.get("max_entry_bytes", 65536)),
                "score_threshold": float(scan.get("score_threshold", DEFAULT_THRESHOLD)),
                "model": str(scan.get("model", DEFAULT_MODEL)) if scan.get("model", DEFAULT_MODEL) else "",
                "model_threshold": float(scan["model_threshold"]) if scan.get("model_threshold") is not None else None,
                "model_veto": [str(c) for c in scan.get("model_veto") or ()],
                "model_veto_never": [str(c) for c in scan.get("model_veto_never") or ()],
                "score_model_floor": float(scan["score_model_floor"]) if scan.get("score_model_floor") is not None else None,
                "quoted_examples": scan.get("quoted_examples"),
                "skill_limits": limits}
    return {"settings": settings, "rules": build_spec(files, str(scan.get("rules_dir", "rules")))}


def _policy_doc(files: Mapping[str, bytes]) -> dict[str, Any]:
    from ..model.safeyaml import load_yaml

    data = files.get("policy.yaml")
    if data is None:
        return {}
    try:
        doc = load_yaml(data.decode("utf-8"), "policies/policy.yaml")
    except UnicodeDecodeError:
        raise ParseError("policy.yaml is not UTF-8", where="policies/policy.yaml", hint="re-save it as UTF-8") from None
    return doc if isinstance(doc, dict) else {}


def _check_patterns(value: Any, key: str, example: str) -> None:
    """``scan.<key>`` must be a list of regular expressions (matched case-insensitively)."""
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise ParseError(f"scan.{key} must be a list of regular expressions", where="policies/policy.yaml",
                         hint=f"e.g. {example}")
    try:
        re.compile(_alternation(value))
    except re.error as exc:
        raise ParseError(f"scan.{key}: not a regular expression: {exc}", where="policies/policy.yaml",
                         hint="each entry is a Python regular expression (case-insensitive)") from None


def _scan_section(doc: dict[str, Any]) -> dict[str, Any]:
    scan = doc.get("scan")
    if scan is None:
        return {}
    if not isinstance(scan, dict):
        raise ParseError("scan: must be a mapping", where="policies/policy.yaml", hint="see policies/schemas/policy.schema.json")
    for key in ("max_entry_bytes", "score_threshold", "model_threshold", "score_model_floor"):
        if key in ("model_threshold", "score_model_floor") and scan.get(key) is None:
            continue
        if key in scan and (isinstance(scan[key], bool) or not isinstance(scan[key], (int, float))):
            raise ParseError(f"scan.{key} must be a number", where="policies/policy.yaml", hint="e.g. 65536 or 6.5")
    veto = scan.get("model_veto")
    if veto is not None and (not isinstance(veto, list) or not all(isinstance(c, str) for c in veto)):
        raise ParseError("scan.model_veto must be a list of categories or rule ids", where="policies/policy.yaml",
                         hint="e.g. [override.ignore-instructions, scoring]")
    if "model_veto_never" in scan:
        _check_patterns(scan["model_veto_never"], "model_veto_never", "['\\bignore previous instructions\\b']")
    if "model" in scan and not isinstance(scan["model"], (str, type(None))):
        raise ParseError("scan.model must be a path under policies/ or null", where="policies/policy.yaml",
                         hint="e.g. models/injection.json; null turns the classifier off")
    quoted = scan.get("quoted_examples")
    if quoted is not None:
        if not isinstance(quoted, dict) or not all(isinstance(quoted.get(k), list) and all(isinstance(c, str) for c in quoted[k])
                                                   for k in ("categories", "cues")):
            raise ParseError("scan.quoted_examples must have lists categories: and cues:", where="policies/policy.yaml",
                             hint="e.g. {categories: [override, role], cues: ['example', 'injection']}")
        for key in ("cues", "enact_cues", "disown_cues"):
            _check_patterns(quoted.get(key, []), f"quoted_examples.{key}", "['follow (?:it|this)', 'act on it']")
    skill = scan.get("skill")
    if skill is not None and (not isinstance(skill, dict) or any(isinstance(v, bool) or not isinstance(v, int) for v in skill.values())):
        raise ParseError("scan.skill must map limit names to integers", where="policies/policy.yaml",
                         hint="keys: max_total_bytes, blob_min_chars (file and count caps are under skills:)")
    return scan


@lru_cache(maxsize=1)
def default_scanner() -> Scanner:
    """The scanner built from memrepo's shipped default policies (cached)."""
    from ..resources import default_policy_files

    return Scanner.from_policy_files(default_policy_files())
