"""Rule files (``policies/rules/*.yaml``): load, validate against rules.schema.json, compile lazily.

A rule file holds one ``category``, optional ``vars`` (shared by all rule files, used as
``{name}`` in patterns), optional ``placeholders`` (secret values to skip), ``rules`` and
optionally one ``scoring`` block. See policies/schemas/rules.schema.json.

Loading has two stages so that a process pays almost nothing for it:

* :func:`build_spec` parses and validates the files, expands variables, checks every pattern
  and computes each pattern's required literals (needles). The result is plain JSON data and is
  cached on disk by content hash (:mod:`memrepo.detect.cache`).
* :func:`ruleset_from_spec` turns that data into a :class:`RuleSet` whose patterns are compiled
  on first use, i.e. only when a text holds the pattern's needles.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain, repeat
from typing import Any, NamedTuple

from ..errors import ParseError
from .needles import (
    Group,
    NeedleIndex,
    Needles,
    TextIndex,
    leading_boundary,
    leading_starts,
    lower_pattern,
    text_index,
)
from .needles import needles as required_literals
from .rxcache import compile_cached

_VAR_RE = compile_cached(r"\{([a-z][a-z0-9_]*)\}")
_MAX_VAR_DEPTH = 4
SPEC_VERSION = 26  # bump when the spec layout or the needle algorithm changes (invalidates caches)


class Pattern:
    """A regular expression compiled on first use; compiled forms are shared per process.

    ``starts``: literals one of which begins every match; ``guard``: None when they are exact, else
    they are lower-cased and hold only where ``guard``'s characters are absent (see
    needles.leading_starts)."""

    __slots__ = ("_keyed", "_rx", "_word_start", "case_folded", "flags", "guard", "owner", "source", "starts")

    def __init__(self, source: str, flags: int = re.MULTILINE, starts: tuple[str, ...] = (), guard: str | None = None) -> None:
        self.source = source
        self.flags = flags
        self.starts = starts
        self.guard = guard
        self._word_start: bool | None = None
        self._rx: re.Pattern[str] | None = None
        self.owner: NeedleIndex | None = None  # the index that holds its ASCII starts (lower-cased) as words
        self._keyed: tuple[dict[str, tuple[str, ...]], frozenset[str], tuple[str, ...]] | None = None
        self.case_folded = False  # every ASCII start is lower-case (set by keyed())

    def keyed(self) -> tuple[dict[str, tuple[str, ...]], frozenset[str], tuple[str, ...]]:
        """Starts by their lower-cased form (a start occurs in a text only if that form occurs in
        the lower-cased text, which the owner's automaton finds), those forms, and the other starts;
        built on first use (start-up builds thousands of patterns). Keyed: ASCII starts and the
        non-ASCII ones lower-casing leaves alone (a CJK word); not "Σ", which lower-cases to "ς" or
        "σ" by its context."""
        if self._keyed is None:
            by_lower: dict[str, list[str]] = {}
            unkeyed: list[str] = []
            for lit in self.starts:
                if _keyable(lit):
                    by_lower.setdefault(lit.lower(), []).append(lit)
                else:
                    unkeyed.append(lit)
            self._keyed = ({k: tuple(v) for k, v in by_lower.items()}, frozenset(by_lower), tuple(unkeyed))
            self.case_folded = all(v == [k] for k, v in by_lower.items())
        return self._keyed

    def may_start(self, index: TextIndex) -> bool:
        """False when no start literal can occur in the indexed (lower-cased) text, the text the
        pattern runs on (always True without starts)."""
        if not self.starts or self.owner is None or self.guard and any(c in index.lowered for c in self.guard):
            return True
        _, lower_starts, unkeyed = self._keyed or self.keyed()
        return bool(unkeyed) or not lower_starts.isdisjoint(index.words_of(self.owner))

    def positions(self, text: str, index: TextIndex) -> list[int] | None:
        """Where a start literal occurs in ``text``, in order. ``index``: of ``text.lower()``, to
        skip the starts that do not occur there. None: case-insensitive starts that do not hold for
        this text (see ``guard``): the regex must be tried everywhere."""
        if self.guard is not None:
            if len(index.lowered) != len(text) or self.guard and any(c in index.lowered for c in self.guard):
                return None
            text = index.lowered  # same offsets: lower-casing kept every character one character
        if self.owner is None:
            lits: Iterable[str] = self.starts
        else:
            by_lower, lower_starts, unkeyed = self._keyed or self.keyed()
            hit = lower_starts.intersection(index.words_of(self.owner))
            if not hit and not unkeyed:
                return []
            if text is index.lowered and self.case_folded:
                # the automaton already found each lower-cased literal: its offsets, no str.find
                where = index.where_of(self.owner)
                found_at = [i for k in hit for i in where[k]]
                _find_all(text, unkeyed, found_at)
                return sorted(set(found_at)) if len(hit) + len(unkeyed) > 1 else found_at
            lits = [lit for k in hit for lit in by_lower[k]]
            lits.extend(unkeyed)
        found: list[int] = []
        _find_all(text, lits, found)
        return sorted(set(found))

    def matches_at(self, text: str, positions: list[int]) -> Iterator[re.Match[str]]:
        """Non-overlapping matches starting at the given (sorted) positions."""
        match = self.rx.match
        end = 0
        for pos in positions:
            if pos < end:
                continue
            m = match(text, pos)
            if m is not None:
                yield m
                end = m.end() if m.end() > pos else pos + 1

    @property
    def rx(self) -> re.Pattern[str]:
        rx = self._rx
        if rx is None:  # the process-wide compiled form, kept here: a scan asks for it a hundred times
            rx = self._rx = _compiled(self.source, self.flags)
        return rx

    @property
    def bounded_rx(self) -> re.Pattern[str]:
        """The regex with the leading ``\b`` the spec dropped (see RuleSet: a bounded branch),
        for a run over the whole text: a match found inside a word and dropped afterwards would hide
        an overlapping one at a word start."""
        return _compiled("\\b" + self.source, self.flags)

    @property
    def word_start(self) -> bool:
        """Every start literal begins with a word character (worked out on first use)."""
        if self._word_start is None:
            self._word_start = all(lit[:1].isalnum() or lit[:1] == "_" for lit in self.starts)
        return self._word_start

    def search(self, text: str, pos: int = 0, endpos: int = 2**62) -> re.Match[str] | None:
        return self.rx.search(text, pos, endpos)


def _keyable(literal: str) -> bool:
    """A start the automaton looks for (see Pattern.keyed)."""
    return literal.isascii() or literal.lower() == literal


def _find_all(text: str, literals: Iterable[str], into: list[int]) -> None:
    """Append every offset (overlapping ones too) at which one of ``literals`` occurs in ``text``."""
    find = text.find
    for lit in literals:
        i = find(lit)
        while i >= 0:
            into.append(i)
            i = find(lit, i + 1)


_compiled = compile_cached  # once per process, the matcher code kept across processes (rxcache)


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _at_boundary(text: str, i: int) -> bool:
    """What ``\\b`` means at position ``i``."""
    return (i > 0 and _is_word(text[i - 1])) != (i < len(text) and _is_word(text[i]))


Branch = tuple["Needles | None", Pattern, bool]  # (required literals, pattern, leading \b dropped)


def iter_branches(branches: tuple[Branch, ...], target: str, index: TextIndex, *, gated: bool = True) -> Iterator[re.Match[str]]:
    """Matches of each pattern whose required literals occur in the indexed (lower-cased) text
    (``gated=False``: the branches are known to pass, see RuleSet.plan).

    A leading ``\b`` is dropped at compile time (it stops re from using its fast prefix scan) and
    checked here instead, with the same meaning: word-ness changes at the match start."""
    present: frozenset[Group] | None = None
    for needles, pat, bounded in branches:
        if gated and needles is not None:
            if present is None:
                owner = needles[0].owner
                assert owner is not None, "a rule set's needle groups belong to its NeedleIndex"
                present = index.groups_of(owner)
            if needles[0] not in present or len(needles) > 1 and not all(g in present for g in needles):
                continue
        if pat.starts and (positions := pat.positions(target, index)) is not None:
            if bounded and positions:  # a start literal inside a word ("rm" in "permission") cannot match
                if pat.word_start:  # each start begins with a word character: \b is a non-word one before it
                    positions = [p for p in positions if not p or not ((c := target[p - 1]).isalnum() or c == "_")]
                else:
                    positions = [p for p in positions if _at_boundary(target, p)]
            if positions:  # else no start literal occurs: skip without building a generator
                yield from pat.matches_at(target, positions)  # each match starts at one of them
            continue
        yield from (pat.bounded_rx if bounded else pat.rx).finditer(target)


def live_branches(branches: tuple[Branch, ...], index: TextIndex) -> tuple[Branch, ...]:
    """The branches whose required literals and start literals occur in the indexed text: the only
    ones that can match it or any of its substrings."""
    present: frozenset[Group] | None = None
    out = []
    for branch in branches:
        needles, pat, _ = branch
        if not pat.may_start(index):
            continue
        if needles is not None:
            if present is None:
                owner = needles[0].owner
                assert owner is not None, "a rule set's needle groups belong to its NeedleIndex"
                present = index.groups_of(owner)
            if not all(g in present for g in needles):
                continue
        out.append(branch)
    return tuple(out)


def search_branches(branches: tuple[Branch, ...], lowered: str) -> bool:
    """True when one of the patterns matches ``lowered`` (checked as given: no needle gates)."""
    return any((pat.bounded_rx if bounded else pat.rx).search(lowered) for _, pat, bounded in branches)


class Rule(NamedTuple):
    id: str
    severity: str
    message: str
    hint: str
    category: str
    branches: tuple[Branch, ...] = ()
    unless: Pattern | None = None
    unless_before: Pattern | None = None  # looked for in the sentence before the match's and the match's: what "it" refers to
    secret: bool = False
    langs: tuple[str, ...] = ()
    case_sensitive: bool = False
    validate: str = ""  # a secret rule's value check (see secrets.VALIDATORS), e.g. "luhn"

    def finditer(self, text: str, index: TextIndex, branches: tuple[Branch, ...] | None = None) -> Iterator[re.Match[str]]:
        """Matches of each pattern whose required literals occur in ``index.lowered`` (``text.lower()``);
        ``branches``: only these, already known to pass their gates (RuleSet.plan).

        Case-insensitive rules are compiled lower-cased and run on the lowered text (IGNORECASE is
        several times slower); match positions then refer to ``index.lowered``.
        """
        target = text if self.case_sensitive else index.lowered
        if branches is not None:
            return iter_branches(branches, target, index, gated=False)
        return iter_branches(self.branches, target, index)


class Feature(NamedTuple):
    name: str
    weight: float
    description: str
    anchored: bool = False  # some pattern is anchored at the sentence start (^)
    branches: tuple[Branch, ...] = ()

    def finditer(self, index: TextIndex) -> Iterator[re.Match[str]]:
        return iter_branches(self.branches, index.lowered, index)

    gates: frozenset[Group] = frozenset()  # one required group of each gated branch
    ungated: tuple[Branch, ...] = ()  # branches without needles

    def viable(self, index: TextIndex, present: frozenset[Group]) -> bool:
        """False when no pattern can match the indexed text: a needle each requires is absent
        (``present``: the text's groups), and the patterns without needles (cheap by construction:
        nothing long to look for) do not match."""
        if not self.gates.isdisjoint(present):
            return True
        return bool(self.ungated) and next(iter_branches(self.ungated, index.lowered, index), None) is not None

    def found_in(self, lowered: str) -> bool:
        """True when the feature occurs in ``lowered`` (lower-cased text)."""
        return next(self.finditer(text_index(lowered)), None) is not None


# (rule, its branches whose gates pass)
Plan = tuple[tuple[Rule, tuple[Branch, ...]], ...]
MAX_PLANS = 4096


class RuleSet(NamedTuple):
    rules: list[Rule]
    features: list[Feature]
    hidden_bonus: float
    placeholders: tuple[Pattern, ...]
    needle_index: NeedleIndex | None
    flat: tuple[tuple[int, Branch], ...]  # every rule branch, in rule order: (rule position, branch)
    gated: dict[Group, tuple[int, ...]]  # positions in ``flat`` of the branches whose first gate group it is
    ungated: tuple[int, ...]  # positions in ``flat`` of the branches without needles
    multi: dict[int, frozenset[Group]]  # the gate of each branch (position in ``flat``) with more than one group
    plans: dict[frozenset[Group], Planned]  # by a text's present groups that gate rules (texts share them: memoised)
    rule_groups: frozenset[Group]  # every group in some rule branch's gate
    probe_items: list[tuple[bool, bool, Any] | None]  # per branch of ``flat``: see _probe_item (None until a plan holds it)

    def plan(self, index: TextIndex) -> Plan:
        """The candidate rules in rule-file order, each with its branches whose required literals
        all occur: found from the text's present groups, not by testing every branch."""
        return tuple(self._grouped(self._planned(index).branches))

    def _grouped(self, positions: tuple[int, ...], only: set[int] | None = None) -> list[tuple[Rule, tuple[Branch, ...]]]:
        """The rules (``only``: those at these positions) of branches at ``positions`` in ``flat``
        (ascending, so in rule order), each with its branches there."""
        by_rule: dict[int, list[Branch]] = {}
        flat = self.flat
        for f in positions:
            ri, branch = flat[f]
            if only is None or ri in only:
                by_rule.setdefault(ri, []).append(branch)
        return [(self.rules[ri], tuple(bs)) for ri, bs in by_rule.items()]

    def _planned(self, index: TextIndex) -> Planned:
        if self.needle_index is None:
            return Planned(tuple(range(len(self.flat))))
        known: Planned | None = index.plans.get(self.needle_index)  # a scan asks twice (secret rules, the others)
        if known is not None:
            return known
        # features and start literals share the index: keyed by the rules' groups only, texts
        # that differ elsewhere share a plan
        present = index.groups_of(self.needle_index) & self.rule_groups
        got = self.plans.get(present)
        if got is None:
            if len(self.plans) >= MAX_PLANS:
                self.plans.clear()
            # most texts hold a set of groups no text before held (a plan per text): built in C-level
            # passes, the branches in rule order, those with a gate of several groups kept when all occur
            picked = [*self.ungated, *chain.from_iterable(map(self.gated.get, present, repeat(())))]
            picked.sort()
            if self.multi:
                multi = self.multi
                picked = [f for f in picked if f not in multi or multi[f] <= present]
            got = self.plans[present] = Planned(tuple(picked))
        index.plans[self.needle_index] = got
        return got

    def matching(self, index: TextIndex, text: str, *, secret: bool) -> list[tuple[Rule, tuple[Branch, ...]]]:
        """The rules (secret ones or the others) some pattern of which matches ``text`` somewhere
        (``index``: of ``text.lower()``), in rule-file order, each with its branches that pass their
        gates: the rest cannot match, whatever their ``unless``. One pass over the start literals the
        text holds tries each pattern only where one of its starts occurs, with no per-rule Python
        work for the many rules that match nothing; the matches themselves are left to Rule.finditer."""
        planned = self._planned(index)
        probe = planned.probes[secret]
        if probe is None:
            probe = planned.probes[secret] = self._probe(planned, secret)
        lowered = index.lowered
        out: set[int] = set()
        words: frozenset[str] = frozenset()
        where: dict[str, list[int]] = {}
        if self.needle_index is not None:  # without one, every pattern is a slow probe
            words, where = index.words_of(self.needle_index), index.where_of(self.needle_index)
        for ri, pat, bound, lower_starts in probe.fast:
            if ri in out or lower_starts.isdisjoint(words):
                continue
            match = pat.rx.match
            for word in lower_starts & words:
                for p in where[word]:
                    if bound and p and (bound == 1 and ((c := lowered[p - 1]).isalnum() or c == "_")
                                        or bound == 2 and not _at_boundary(lowered, p)):
                        continue
                    if match(lowered, p) is not None:
                        out.add(ri)
                        break
                if ri in out:
                    break
        for ri, branch, sensitive in probe.slow:
            if ri not in out and next(iter_branches((branch,), text if sensitive else lowered, index, gated=False), None) is not None:
                out.add(ri)
        return self._grouped(planned.branches, out) if out else []  # most texts: none

    def _probe(self, planned: Planned, secret: bool) -> Probe:
        """A plan's patterns for matching (the secret rules' or the others'), from each branch's probe
        item: one C-level pass per list."""
        items = self.probe_items
        mine = [items[f] or self._probe_item(f) for f in planned.branches]
        return Probe(tuple(item for s, fast, item in mine if fast and s == secret),
                     tuple(item for s, fast, item in mine if not fast and s == secret))

    def _probe_item(self, f: int) -> tuple[bool, bool, Any]:
        """(its rule is a secret rule, tried at its starts, its Probe entry) of the branch at ``f`` in
        ``flat``: worked out when a plan first holds it, then kept (keyed() sorts the pattern's starts;
        a process that scans one entry needs a few hundred of the rule set's branches)."""
        ri, branch = self.flat[f]
        rule = self.rules[ri]
        _, pat, bounded = branch
        fast = not rule.case_sensitive and bool(pat.starts) and pat.owner is not None and pat.guard is None
        if fast:
            _, lower_starts, unkeyed = pat.keyed()
            fast = not unkeyed and pat.case_folded
        item: tuple[bool, bool, Any] = ((rule.secret, True, (ri, pat, (1 if pat.word_start else 2) if bounded else 0, lower_starts))
                                        if fast else (rule.secret, False, (ri, branch, rule.case_sensitive)))
        self.probe_items[f] = item
        return item

    def is_placeholder(self, value: str) -> bool:
        return any(p.search(value) for p in self.placeholders)


class Planned:
    """A scan plan (the positions in RuleSet.flat of the branches whose gates pass, ascending) and
    the probes of its rules (RuleSet.matching: the others' and the secret ones'), built on first use."""

    __slots__ = ("branches", "probes")

    def __init__(self, branches: tuple[int, ...]) -> None:
        self.branches = branches
        self.probes: list[Probe | None] = [None, None]  # by secret (False, True)


class Probe(NamedTuple):
    """A plan's patterns for RuleSet.matching. ``fast``: (rule position, pattern, boundary check,
    lower-cased starts) of the patterns that run on the lower-cased text with exact starts, tried
    only where a start occurs (boundary check: 0 none, 1 a non-word character or nothing before a
    word start, 2 ``\b``); ``slow``: (rule position, branch, case-sensitive) of the others, tried as
    Rule.finditer tries them."""

    fast: tuple[tuple[int, Pattern, int, frozenset[str]], ...]
    slow: tuple[tuple[int, Branch, bool], ...]


# -- spec: parsed, validated, expanded; JSON data -----------------------------------------------


def build_spec(files: Mapping[str, bytes], rules_dir: str = "rules") -> dict[str, Any]:
    """Parse, validate and expand the rule files; raise ParseError naming file:line on a mistake."""
    prefix = rules_dir.strip("/") + "/"
    docs: list[tuple[str, dict[str, Any]]] = []
    for name in sorted(files):
        if name.startswith(prefix) and name.endswith((".yaml", ".yml")):
            docs.append((name, _parse(name, files[name], files)))
    variables: dict[str, tuple[str, str]] = {}
    for name, doc in docs:
        for key, value in (doc.get("vars") or {}).items():
            if key in variables and variables[key][0] != value:
                raise ParseError(f"variable {key!r} is defined twice with different values",
                                 where=f"policies/{name}", hint=f"it is already defined in policies/{variables[key][1]}")
            variables[key] = (value, name)
    values = {k: v for k, (v, _) in variables.items()}
    spec: dict[str, Any] = {"version": SPEC_VERSION, "rules": [], "features": [], "placeholders": [], "hidden_bonus": 2.0}
    seen: dict[str, str] = {}
    for name, doc in docs:
        where = f"policies/{name}"
        for i, raw in enumerate(doc.get("rules") or []):
            if raw["id"] in seen:
                raise ParseError(f"rule id {raw['id']!r} is used twice", where=where,
                                 hint=f"also in policies/{seen[raw['id']]}; ids must be unique")
            seen[raw["id"]] = name
            spec["rules"].append(_rule_spec(raw, doc["category"], values, f"{where} (rules[{i}] {raw['id']})"))
        for j, pat in enumerate(doc.get("placeholders") or []):
            spec["placeholders"].append(_check(pat, values, f"{where} (placeholders[{j}])"))
        scoring = doc.get("scoring")
        if scoring:
            spec["hidden_bonus"] = float(scoring.get("hidden_bonus", spec["hidden_bonus"]))
            for k, feat in enumerate(scoring["features"]):
                fwhere = f"{where} (scoring.features[{k}] {feat['name']})"
                _combine(feat["patterns"], values, fwhere, re.IGNORECASE | re.MULTILINE)
                spec["features"].append({
                    "name": feat["name"], "weight": float(feat["weight"]), "description": feat.get("description", ""),
                    "anchored": any(p.lstrip().startswith("^") for p in feat["patterns"]),
                    "branches": _branch_specs(feat["patterns"], values, fwhere, False)})
    spec["words"] = _automaton_words([*spec["rules"], *spec["features"]])
    return spec


def _automaton_words(items: list[dict[str, Any]]) -> list[list[str]]:
    """The NeedleIndex's words (every gate needle and keyed start, lower-cased), sorted: the ASCII
    ones and the others (CJK, Cyrillic, accented ...); computed once here, so that a process only
    loads them."""
    words: set[str] = set()
    for item in items:
        for gates, _, _, starts, _ in item["branches"]:
            words.update(n for group in gates or () for n in group)
            words.update(lit.lower() for lit in starts if _keyable(lit))
    return [sorted(w for w in words if w.isascii()), sorted(w for w in words if not w.isascii())]


def _rule_spec(raw: dict[str, Any], category: str, values: Mapping[str, str], where: str) -> dict[str, Any]:
    case_sensitive = bool(raw.get("case_sensitive"))
    _combine(raw["patterns"], values, where, re.MULTILINE | (0 if case_sensitive else re.IGNORECASE))
    unless, before = (_combine(raw[key], values, where, re.IGNORECASE | re.MULTILINE).pattern if raw.get(key) else None
                      for key in ("unless", "unless_before"))
    return {"id": raw["id"], "severity": raw["severity"], "message": raw["message"], "hint": raw.get("hint", ""),
            "category": raw.get("category", category), "langs": list(raw.get("langs") or ()),
            "secret": bool(raw.get("secret")), "case_sensitive": case_sensitive, "unless": unless,
            "unless_before": before,
            "validate": str(raw.get("validate", "")),
            "branches": _branch_specs(raw["patterns"], values, where, case_sensitive)}


def _branch_specs(patterns: list[str], values: Mapping[str, str], where: str, case_sensitive: bool) -> list[Any]:
    out: list[Any] = []
    for pattern in patterns:
        expanded = _check(pattern, values, where)
        source = expanded if case_sensitive else lower_pattern(expanded)
        bounded = leading_boundary(source)
        groups = required_literals(source, re.MULTILINE)
        # Only the most selective group gates the pattern: weak ones ("you", "the") occur in nearly
        # every text, so checking them costs more than the regex run they would save.
        best = max(groups, key=lambda g: (min(map(_weight, g.needles)), -len(g.needles))) if groups else None
        final = source[2:] if bounded else source
        starts, guard = leading_starts(final, re.MULTILINE) or ([], None)
        if bounded and not starts:
            # without start literals the regex runs over the whole text: its own \b rejects a
            # position inside a word at once, where a match found there and dropped afterwards
            # would have hidden an overlapping one at a word start
            final, bounded = source, False
        gates = [list(best.needles)] if best else None
        if gates and not starts:
            # a regex run over the whole text is dear (it is tried at every position): every other
            # group as selective as a three-letter word gates it too, a set look-up each
            gates += [list(g.needles) for g in groups or () if g is not best and min(map(_weight, g.needles)) >= 3]
        out.append([gates, final, bounded, starts, guard])
    return out


def _weight(s: str) -> int:
    return sum(1 if c.isascii() else 2 for c in s)


def ruleset_from_spec(spec: Mapping[str, Any]) -> RuleSet:
    """A RuleSet from :func:`build_spec` data; nothing is compiled until a text needs it."""
    groups: dict[tuple[str, ...], Group] = {}

    patterns: list[Pattern] = []

    def group(needles: list[str]) -> Group:
        key = tuple(needles)
        g = groups.get(key)
        if g is None:
            g = groups[key] = Group(key)
        return g

    def branches(items: list[Any]) -> tuple[Branch, ...]:
        out = []
        for gates, source, bounded, starts, guard in items:
            gate = tuple(group(n) for n in gates) if gates else None
            pattern = Pattern(source, re.MULTILINE, tuple(starts), guard)
            patterns.append(pattern)
            out.append((gate, pattern, bool(bounded)))
        return tuple(out)

    rules = [Rule(id=r["id"], severity=r["severity"], message=r["message"], hint=r["hint"], category=r["category"],
                  branches=branches(r["branches"]),
                  unless=Pattern(r["unless"], re.IGNORECASE | re.MULTILINE) if r["unless"] else None,
                  unless_before=Pattern(r["unless_before"], re.IGNORECASE | re.MULTILINE) if r.get("unless_before") else None,
                  secret=r["secret"], langs=tuple(r["langs"]), case_sensitive=r["case_sensitive"],
                  validate=r["validate"])
             for r in spec["rules"]]
    features = []
    for f in spec["features"]:
        bs = branches(f["branches"])
        features.append(Feature(f["name"], f["weight"], f["description"], f["anchored"], bs,
                                frozenset(b[0][0] for b in bs if b[0]), tuple(b for b in bs if b[0] is None)))
    flat = tuple((i, branch) for i, rule in enumerate(rules) for branch in rule.branches)
    gated: dict[Group, list[int]] = {}
    ungated = []
    multi = {}
    for f, (_, (gate, _, _)) in enumerate(flat):
        if gate is None:
            ungated.append(f)
        else:
            gated.setdefault(gate[0], []).append(f)
            if len(gate) > 1:
                multi[f] = frozenset(gate)
    needle_index = NeedleIndex(groups.values(), spec["words"])
    for pattern in patterns:
        pattern.owner = needle_index
    return RuleSet(rules, features, float(spec["hidden_bonus"]),
                   tuple(Pattern(p, re.IGNORECASE) for p in spec["placeholders"]), needle_index,
                   flat, {g: tuple(v) for g, v in gated.items()}, tuple(ungated), multi, {},
                   frozenset(g for rule in rules for gate, _, _ in rule.branches for g in gate or ()), [None] * len(flat))


def _parse(name: str, data: bytes, files: Mapping[str, bytes]) -> dict[str, Any]:
    from ..model.safeyaml import load_yaml

    where = f"policies/{name}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("rule file is not UTF-8", where=where, hint="re-save it as UTF-8") from None
    doc = load_yaml(text, where)
    _validate(doc, where, text, files)
    return doc  # type: ignore[no-any-return]


def _validate(doc: Any, where: str, text: str, files: Mapping[str, bytes]) -> None:
    import jsonschema

    schema = _schema(files)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    err = errors[0]
    path = list(err.absolute_path)
    line = _line_of(text, path)
    dotted = ".".join(str(p) for p in path) or "(top level)"
    raise ParseError(f"{dotted}: {err.message}", where=f"{where}:{line}" if line else where,
                     hint="see policies/schemas/rules.schema.json for the rule file format")


def _schema(files: Mapping[str, bytes]) -> dict[str, Any]:
    data = files.get("schemas/rules.schema.json")
    if data is None:
        from ..resources import default_policy_files

        data = default_policy_files()["schemas/rules.schema.json"]
    where = "policies/schemas/rules.schema.json"
    try:
        schema = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParseError(f"the rule-file schema is not valid JSON: {exc}", where=where,
                         hint="restore it from `memrepo init` defaults") from None
    import jsonschema

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ParseError(f"the rule-file schema is not a valid JSON schema: {exc.message}", where=where,
                         hint="restore it from `memrepo init` defaults") from None
    return schema  # type: ignore[no-any-return]


def _line_of(text: str, path: list[Any]) -> int:
    """Best effort: the line of the deepest key or list item named by ``path``."""
    lines = text.split("\n")
    pos, indent = 0, -1
    for part in path:
        for i in range(pos, len(lines)):
            stripped = lines[i].lstrip()
            ind = len(lines[i]) - len(stripped)
            if isinstance(part, str) and ind > indent and re.match(rf"(?:- )?{re.escape(part)}\s*:", stripped):
                pos, indent = i, ind
                break
            if isinstance(part, int) and stripped.startswith("- ") and ind >= indent:
                count = sum(1 for j in range(pos, i + 1) if lines[j].lstrip().startswith("- ")
                            and len(lines[j]) - len(lines[j].lstrip()) == ind)
                if count == part + 1:
                    pos, indent = i, ind
                    break
    return pos + 1 if path else 0


def _combine(patterns: list[str], values: Mapping[str, str], where: str, flags: int) -> re.Pattern[str]:
    expanded = [_check(p, values, where) for p in patterns]
    try:
        return re.compile("|".join(f"(?:{p})" for p in expanded), flags)
    except re.error as exc:
        raise ParseError(f"patterns do not combine: {exc}", where=where, hint="check the patterns' groups") from None


def _check(pattern: str, values: Mapping[str, str], where: str) -> str:
    expanded = _expand(pattern, values, where)
    try:
        re.compile(expanded)
    except re.error as exc:
        raise ParseError(f"pattern is not a valid regular expression: {exc} in {pattern[:80]!r}", where=where,
                         hint="fix the regular expression (Python re syntax; {name} inserts a variable)") from None
    return expanded


def _expand(pattern: str, values: Mapping[str, str], where: str) -> str:
    for _ in range(_MAX_VAR_DEPTH):
        missing = [m for m in _VAR_RE.findall(pattern) if m not in values]
        if missing:
            raise ParseError(f"unknown variable {{{missing[0]}}}", where=where,
                             hint="define it under vars: in a rule file, or escape the brace as \\{")
        new = _VAR_RE.sub(lambda m: values.get(m.group(1), m.group(0)), pattern)
        if new == pattern:
            return new
        pattern = new
    return pattern
