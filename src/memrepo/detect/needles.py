"""Required literals of a regular expression: a fast prefilter before running it.

``needles(pattern)`` returns groups of lower-cased strings: any match of the pattern contains at
least one string of *every* group (or None when nothing useful is known). Checking 1 KB of text
for a few substrings costs microseconds; running a large alternation over it costs far more.
"""
from __future__ import annotations

import gc
import re
import re._parser as sre_parse
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from re._constants import ASSERT, ASSERT_NOT, AT, BRANCH, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN
from typing import Any

MIN_USEFUL = 2  # a group whose shortest needle weighs less filters nothing worth the check (or the compile it saves)
MAX_NEEDLES = 80
# One-character literals selective enough to look for (as a needle or a start): the rarer ASCII
# symbols ("@" of an e-mail address) and, as starts, any non-ASCII character (a CJK word); a letter,
# a digit, a space or common punctuation occurs too often to pay.
_RARE_SYMBOLS = frozenset("@<[{$`#|\\~^%&*=+")


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

    __slots__ = ("lowered", "plans", "present", "where", "words")

    def __init__(self, lowered: str) -> None:
        self.lowered = lowered
        # by NeedleIndex, held (not by id: a cached TextIndex may outlive a rule set, and a new
        # NeedleIndex could be given the id of the freed one)
        self.words: dict[NeedleIndex, frozenset[str]] = {}
        self.where: dict[NeedleIndex, dict[str, list[int]]] = {}
        self.present: dict[NeedleIndex, frozenset[Group]] = {}
        self.plans: dict[NeedleIndex, Any] = {}  # the scan plan of the rule set of that NeedleIndex (RuleSet._planned)

    def words_of(self, needle_index: NeedleIndex) -> frozenset[str]:
        """The words of ``needle_index`` that occur in this text."""
        found = self.words.get(needle_index)
        if found is None:
            found = self.words[needle_index] = frozenset(self.where_of(needle_index))
        return found

    def where_of(self, needle_index: NeedleIndex) -> dict[str, list[int]]:
        """Where each word of ``needle_index`` occurs in this text (start offsets, ascending)."""
        found = self.where.get(needle_index)
        if found is None:
            found = self.where[needle_index] = needle_index.locate(self.lowered)
        return found

    def groups_of(self, needle_index: NeedleIndex) -> frozenset[Group]:
        """The groups of ``needle_index`` present in this text."""
        found = self.present.get(needle_index)
        if found is None:
            found = self.present[needle_index] = needle_index.present(self)
        return found


_ASCII_LOOKALIKES = str.maketrans({"\u017f": "s", "\u0131": "i"})  # re's case-insensitive extras for ASCII letters


@contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collection inside: building thousands of small objects (a rule set, an automaton's
    values) triggers collections that find nothing to free and only cost time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class NeedleIndex:
    """Every needle of a rule set's groups, and the start literals of its patterns, in an
    Aho-Corasick automaton: one pass over a text finds all of them (pyahocorasick, in C), where a
    substring search per needle costs a Python call each. An ASCII text is read by an automaton of
    the ASCII words alone; any other text by one of all the words (CJK, Cyrillic, accented ... too),
    in one pass: a process that scans only ASCII texts never builds it."""

    __slots__ = ("_aliases", "_automata", "_words", "by_word", "groups")

    def __init__(self, groups: Iterable[Group], words: tuple[list[str], list[str]] | list[list[str]]) -> None:
        """``words``: every needle of ``groups`` and every start, lower-cased and sorted: the ASCII
        ones and the others."""
        self.groups = tuple(set(groups))
        self.by_word: dict[str, tuple[Group, ...]] = {}
        for g in self.groups:
            g.owner = self
            for needle in g.needles:
                self.by_word[needle] = (*self.by_word.get(needle, ()), g)
        self._words = (words[0], words[1])
        self._automata: list[Any] = [None, None]
        # per automaton, the words a key stands for besides its value's ("paſſword" read as "password")
        self._aliases: list[dict[str, tuple[str, ...]]] = [{}, {}]

    def _built(self, which: int) -> Any:
        """Automaton 0 (the ASCII words) or 1 (all), built on first use (a few milliseconds)."""
        automaton = self._automata[which]
        if automaton is None:
            with gc_paused():
                automaton = self._automata[which] = self._build(which)
        return automaton

    def _build(self, which: int) -> Any:
        """Automaton ``which``: every word keyed as locate reads the text ("ı" as "i"), its value
        (word, length - 1): a hit's start is its end minus that."""
        import ahocorasick

        automaton = ahocorasick.Automaton()
        words = self._words[0] if which == 0 else [*self._words[0], *self._words[1]]
        keys = "\0".join(words).replace("\u017f", "s").replace("\u0131", "i").split("\0")  # C-level passes
        if len(keys) != len(words):  # a word holds "\0"
            keys = [word.translate(_ASCII_LOOKALIKES) for word in words]
        if keys == words or len(set(keys)) == len(keys):
            # one word per key (the usual case); the keys keep the words' lengths ("ı" is one character)
            list(map(automaton.add_word, keys, zip(words, map((-1).__add__, map(len, words)))))
        else:  # a key stands for several words ("kalıcı" and "kalici"): the others are aliases
            by_key: dict[str, list[str]] = {}
            for key, word in zip(keys, words):
                by_key.setdefault(key, []).append(word)
            for key, (word, *others) in by_key.items():
                automaton.add_word(key, (word, len(key) - 1))
                if others:
                    self._aliases[which][word] = tuple(others)
        if len(automaton):
            automaton.make_automaton()
        return automaton

    def locate(self, lowered: str) -> dict[str, list[int]]:
        """Each word found in ``lowered`` with its start offsets (one pass of one automaton).
        "ſ" and "ı" are read as "s" and "i" (one character each: the offsets stay): a pattern's
        case-insensitive group, ``(?i:password)``, matches "paſſword" though lower-casing keeps the "ſ"."""
        where: dict[str, list[int]] = {}
        get = where.get
        ascii_only = lowered.isascii()
        which = 0 if ascii_only or not self._words[1] else 1
        if not ascii_only and ("\u017f" in lowered or "\u0131" in lowered):
            lowered = lowered.translate(_ASCII_LOOKALIKES)
        automaton = self._built(which)
        if len(automaton):
            for end, (word, size) in automaton.iter(lowered):  # offsets ascend
                starts = get(word)
                if starts is None:
                    where[word] = [end - size]
                else:
                    starts.append(end - size)
        for word, others in self._aliases[which].items():
            if word in where:
                where.update((other, where[word]) for other in others)
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
    return bool(group) and len(group) <= MAX_NEEDLES and (
        min(_weight(s) for s in group) >= MIN_USEFUL or all(s in _RARE_SYMBOLS for s in group))


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


def leading_starts(pattern: str, flags: int = 0) -> tuple[list[str], str | None] | None:
    """Literal strings one of which every match starts with (None when unknown): the regex then
    only needs trying where one occurs, instead of at every position of the text.

    Returns (literals, guard). ``guard`` is None when the literals are exact; a string when some
    are case-insensitive (``(?i:Passwort)``): then the literals are lower-cased, to be found in the
    lower-cased text, and they hold only where that text is as long as the original and holds none
    of ``guard``'s characters (the ones ``re`` matches case-insensitively beyond ``str.lower``, such
    as "ϐ" for "β"; not "ſ" for "s" and "ı" for "i", which the automaton reads as those letters)."""
    try:
        parsed = sre_parse.parse(pattern, flags)
    except Exception:  # noqa: BLE001
        return None
    state = _StartState()
    state.folded = bool(parsed.state.flags & re.IGNORECASE)
    out = _firsts(list(parsed), 0, "", state)
    if out is None:
        # too many to list once short runs go on into what follows (9 x 9 x 13 for "不要|别 …"
        # + "让|告诉 …" + "用户|…"): the leading literal runs alone, where they are selective
        state = _StartState()
        state.folded, state.shallow = bool(parsed.state.flags & re.IGNORECASE), True
        out = _firsts(list(parsed), 0, "", state)
    if not out or len(out) > MAX_STARTS or not all(map(_selective, out)):
        return None
    if not state.folded:
        return sorted(set(out)), None
    lowered = {s.lower() for s in out}
    if any(len(s) != len(s.lower()) for s in out) or _EXTRA_CASES is None:
        return None
    # "ſ" and "ı" need no guard: NeedleIndex.locate reads them as "s" and "i"
    guard = {chr(p) for s in lowered for c in s for p in _EXTRA_CASES.get(ord(c), ())} - {"\u017f", "\u0131"}
    return sorted(lowered), "".join(sorted(guard))


def _selective(s: str) -> bool:
    return len(s) >= 2 or len(s) == 1 and (not s.isascii() or s in _RARE_SYMBOLS)


try:  # the characters re matches case-insensitively beyond simple lower-casing (3.11+)
    from re._casefix import _EXTRA_CASES  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - another Python: case-insensitive starts are not used
    _EXTRA_CASES = None


class _StartState:
    __slots__ = ("folded", "shallow")

    def __init__(self) -> None:
        self.folded = False  # some literal came from a case-insensitive group
        self.shallow = False  # a literal run ends at the first item that is not a literal


def _firsts(items: list[tuple[Any, Any]], i: int, run: str, state: _StartState) -> list[str] | None:
    """Literal prefixes, one of which begins every match of ``run`` followed by ``items[i:]``. A
    short run goes on into what follows ("l" + "e|a|es": "le", "la", "les")."""
    while i < len(items):
        op, av = items[i]
        if op is LITERAL:
            run += chr(av)
            i += 1
            continue
        if op is AT and str(av) == "AT_BOUNDARY" or op is ASSERT or op is ASSERT_NOT:
            i += 1  # zero-width (\b, a look-behind or look-ahead): the literals around it stay contiguous
            continue
        if len(run) >= LONG_ENOUGH or state.shallow and run:
            return [run]
        folded = state.folded
        got = _expand(op, av, items, i, run, state)
        if got is None and run:
            state.folded = folded
            return [run]
        return got
    return [run] if run else None


LONG_ENOUGH = 4  # a literal prefix this long is selective: no need to look further


def _expand(op: Any, av: Any, items: list[tuple[Any, Any]], i: int, run: str, state: _StartState) -> list[str] | None:
    rest = items[i + 1:]
    if op is IN and len(av) <= 4 and all(o is LITERAL for o, _ in av):
        return _union([(rest, run + chr(c)) for _, c in av], state)
    if op is SUBPATTERN:
        if av[1] & re.IGNORECASE:
            state.folded = True
        return _firsts([*av[-1], *rest], 0, run, state)
    if op is BRANCH:
        return _union([([*alt, *rest], run) for alt in av[1]], state)
    if op in (MAX_REPEAT, MIN_REPEAT):
        lo, hi, body = av
        # once: the body, then what follows; more often: the body's own start (it repeats)
        first = [([*body, *rest], run)] if hi == 1 else [(list(body), run)]
        return _union(first if lo >= 1 else [*first, (rest, run)], state)  # lo 0: or the body left out
    return None


def _union(paths: list[tuple[list[tuple[Any, Any]], str]], state: _StartState) -> list[str] | None:
    out: list[str] = []
    for items, run in paths:
        got = _firsts(items, 0, run, state)
        if not got or len(out) + len(got) > MAX_STARTS:
            return None
        out.extend(got)
    return out


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
