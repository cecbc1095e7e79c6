"""Required literals of a regular expression: a fast prefilter before running it.

``needles(pattern)`` returns groups of lower-cased strings: any match of the pattern contains at
least one string of *every* group (or None when nothing useful is known). Checking 1 KB of text
for a few substrings costs microseconds; running a large alternation over it costs far more.
"""
from __future__ import annotations

import re
import re._parser as sre_parse
from collections.abc import Iterable
from functools import lru_cache
from re._constants import AT, BRANCH, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN
from typing import Any

MIN_USEFUL = 2  # a group whose shortest needle weighs less filters nothing worth the check (or the compile it saves)
MAX_NEEDLES = 80


class Group:
    """Needles of which a match holds at least one."""

    __slots__ = ("needles", "owner")

    def __init__(self, needles: frozenset[str] | tuple[str, ...]) -> None:
        self.needles = tuple(sorted(needles))
        self.owner: NeedleIndex | None = None  # the NeedleIndex holding it


Needles = tuple[Group, ...]


def text_index(lowered: str) -> TextIndex:
    """The index of ``lowered``, shared by the rules, the secrets pass and the scoring of one scan."""
    return _cached_index(lowered)


class TextIndex:
    """A lower-cased text and, per NeedleIndex, the words of it found there (needles and pattern
    start literals) and the needle groups they make present: computed once, then looked up."""

    __slots__ = ("lowered", "present", "where", "words")

    def __init__(self, lowered: str) -> None:
        self.lowered = lowered
        self.words: dict[int, frozenset[str]] = {}  # by id(NeedleIndex)
        self.where: dict[int, dict[str, list[int]]] = {}
        self.present: dict[int, frozenset[Group]] = {}

    def words_of(self, needle_index: NeedleIndex) -> frozenset[str]:
        """The words of ``needle_index`` that occur in this text."""
        found = self.words.get(id(needle_index))
        if found is None:
            found = self.words[id(needle_index)] = frozenset(self.where_of(needle_index))
        return found

    def where_of(self, needle_index: NeedleIndex) -> dict[str, list[int]]:
        """Where each word of ``needle_index`` occurs in this text (start offsets, ascending)."""
        found = self.where.get(id(needle_index))
        if found is None:
            found = self.where[id(needle_index)] = needle_index.locate(self.lowered)
        return found

    def groups_of(self, needle_index: NeedleIndex) -> frozenset[Group]:
        """The groups of ``needle_index`` present in this text."""
        found = self.present.get(id(needle_index))
        if found is None:
            found = self.present[id(needle_index)] = needle_index.present(self)
        return found


class NeedleIndex:
    """Every needle of a rule set's groups, and the start literals of its patterns, in one
    Aho-Corasick automaton: one pass over a text finds all of them (pyahocorasick, in C), where a
    substring search per needle costs a Python call each."""

    __slots__ = ("_automaton", "_starts", "by_word", "groups")

    def __init__(self, groups: Iterable[Group], starts: Iterable[str] = ()) -> None:
        self.groups = tuple(set(groups))
        self.by_word: dict[str, tuple[Group, ...]] = {}
        for g in self.groups:
            g.owner = self
            for needle in g.needles:
                self.by_word[needle] = (*self.by_word.get(needle, ()), g)
        self._starts = frozenset(starts)
        self._automaton: Any = None

    def _built(self) -> Any:
        """The automaton, built on first use (a few milliseconds; a process that scans nothing skips it)."""
        if self._automaton is None:
            import ahocorasick

            automaton = ahocorasick.Automaton()
            for word in sorted(self._starts.union(self.by_word)):
                automaton.add_word(word, (word, len(word) - 1))
            if len(automaton):
                automaton.make_automaton()
            self._automaton = automaton
        return self._automaton

    def locate(self, lowered: str) -> dict[str, list[int]]:
        """Each word found in ``lowered`` with its start offsets (one pass of the automaton)."""
        automaton = self._built()
        where: dict[str, list[int]] = {}
        if not len(automaton):
            return where
        get = where.get
        for end, (word, size) in automaton.iter(lowered):
            starts = get(word)
            if starts is None:
                where[word] = [end - size]
            else:
                starts.append(end - size)
        return where

    def present(self, index: TextIndex) -> frozenset[Group]:
        by_word = self.by_word
        found: set[Group] = set()
        for word in index.words_of(self):
            gs = by_word.get(word)
            if gs is not None:
                found.update(gs)
        return frozenset(found)


@lru_cache(maxsize=16)
def _cached_index(lowered: str) -> TextIndex:
    return TextIndex(lowered)


def needles(pattern: str, flags: int = 0) -> Needles | None:
    try:
        tree = sre_parse.parse(pattern, flags)
    except Exception:  # noqa: BLE001 - an unparsable pattern gets no prefilter
        return None
    groups = [frozenset(g) for g in _sequence(list(tree)) if _useful(g)]
    return tuple(Group(g) for g in sorted(groups, key=len)) or None


def _useful(group: set[str]) -> bool:
    return bool(group) and len(group) <= MAX_NEEDLES and min(_weight(s) for s in group) >= MIN_USEFUL


def _weight(s: str) -> int:
    """Length where a non-ASCII character (CJK words are two or three of them) counts double."""
    return sum(1 if c.isascii() else 2 for c in s)


def _sequence(items: list[tuple[Any, Any]]) -> list[set[str]]:
    """Every group required by a sequence: literal runs and required sub-items."""
    groups: list[set[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            groups.append({"".join(run).lower()})
            run.clear()

    for op, av in items:
        if op is LITERAL:
            run.append(chr(av))
            continue
        if op is AT:
            continue  # zero-width (\b, ^): the literals around it stay contiguous in the text
        flush()
        groups.extend(_item(op, av))
    flush()
    return groups


def _best(groups: list[set[str]]) -> set[str] | None:
    useful = [g for g in groups if g]
    return max(useful, key=lambda g: (min(_weight(x) for x in g), -len(g))) if useful else None


def _item(op: Any, av: Any) -> list[set[str]]:
    if op is SUBPATTERN:
        return _sequence(list(av[-1]))
    if op is BRANCH:
        out: set[str] = set()
        for alt in av[1]:
            best = _best(_sequence(list(alt)))
            if best is None:
                return []
            out |= best
        return [out]
    if op in (MAX_REPEAT, MIN_REPEAT):
        lo, _hi, body = av
        return _sequence(list(body)) if lo >= 1 else []
    if op is IN and len(av) <= 4 and all(o is LITERAL for o, _ in av):
        return [{chr(c).lower() for _, c in av}]
    return []


MAX_STARTS = 200


def leading_literals(pattern: str, flags: int = 0) -> list[str] | None:
    """Literal strings one of which every match starts with (None when unknown): the regex then
    only needs trying where ``str.find`` sees one, instead of at every position of the text."""
    try:
        tree = list(sre_parse.parse(pattern, flags))
    except Exception:  # noqa: BLE001
        return None
    out = _starts(tree)
    if not out or len(out) > MAX_STARTS or min(len(s) for s in out) < 2:
        return None
    return sorted(set(out))


def _starts(items: list[tuple[Any, Any]]) -> list[str] | None:
    run: list[str] = []
    for op, av in items:
        if op is LITERAL:
            run.append(chr(av))
            continue
        if run:
            return ["".join(run)]
        if op is AT and str(av) == "AT_BOUNDARY":
            continue  # zero-width; the literal after it still starts the match
        if op is SUBPATTERN:
            if av[1] & re.IGNORECASE:
                return None  # (?i:Passwort) starts "Passwort" too: str.find of one spelling would miss it
            return _starts(list(av[-1]))
        if op is BRANCH:
            out: list[str] = []
            for alt in av[1]:
                got = _starts(list(alt))
                if not got:
                    return None
                out.extend(got)
            return out
        return None
    return ["".join(run)] if run else None


def leading_boundary(pattern: str) -> bool:
    """True when the pattern is ``\\b`` followed by a sequence (no top-level alternation), so the
    ``\\b`` can be dropped from the regex and checked on each match instead."""
    try:
        tree = list(sre_parse.parse(pattern))
    except Exception:  # noqa: BLE001
        return False
    return len(tree) > 1 and tree[0][0] is AT and str(tree[0][1]) == "AT_BOUNDARY"


def lower_pattern(pattern: str) -> str:
    """The pattern with its literal letters lower-cased (escapes such as \\S, \\W, \\B kept), for
    matching against lower-cased text without the slow IGNORECASE flag."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            out.append(pattern[i: i + 2])
            i += 2
            continue
        out.append(ch.lower())
        i += 1
    return "".join(out)
