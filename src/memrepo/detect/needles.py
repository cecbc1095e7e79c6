"""Required literals of a regular expression: a fast prefilter before running it.

``needles(pattern)`` returns groups of lower-cased strings: any match of the pattern contains at
least one string of *every* group (or None when nothing useful is known). Checking 1 KB of text
for a few substrings costs microseconds; running a large alternation over it costs far more.
"""
from __future__ import annotations

import re._parser as sre_parse
from collections.abc import Iterable
from functools import lru_cache
from re._constants import AT, BRANCH, IN, LITERAL, MAX_REPEAT, MIN_REPEAT, SUBPATTERN
from typing import Any

MIN_USEFUL = 2  # a group whose shortest needle weighs less filters nothing worth the check (or the compile it saves)
MAX_NEEDLES = 80


class Group:
    """Needles of which a match holds at least one, with their 3-character keys for a quick reject."""

    __slots__ = ("keyed", "keys", "needle_keys", "needles", "owner")

    def __init__(self, needles: frozenset[str] | tuple[str, ...], keys: tuple[str, ...] | None = None) -> None:
        """``keys``, when given, are the needles' keys in the order of ``sorted(needles)``."""
        self.needles = tuple(sorted(needles))
        self.needle_keys = tuple(_key(n) for n in self.needles) if keys is None else keys
        self.keys = frozenset(self.needle_keys)
        # A TextIndex holds 3-grams (and 2-grams of non-ASCII text): shorter needles skip the key check.
        self.keyed = all(len(n) >= 3 or len(n) == 2 and not n.isascii() for n in self.needles)
        self.owner: NeedleIndex | None = None  # the NeedleIndex holding it


Needles = tuple[Group, ...]


# Letters from most to least frequent in English text: a needle is keyed by its rarest trigram.
_RARITY = {c: i for i, c in enumerate(" etaoinshrdlcumwfgypbvkjxqz")}


def needle_key(s: str) -> str:
    """The key under which a needle is indexed (see :func:`_key`)."""
    return _key(s)


def _key(s: str) -> str:
    """The needle's rarest 3-character substring (by letter frequency): if the needle occurs, so does
    its key, and rare keys reject more texts without a substring search."""
    if len(s) <= 3:
        return s
    return max((s[i: i + 3] for i in range(len(s) - 2)), key=lambda t: sum(_RARITY.get(c, 30) for c in t))


def text_index(lowered: str) -> TextIndex:
    """The index of ``lowered``, shared by the rules, the secrets pass and the scoring of one scan."""
    return _cached_index(lowered)


class TextIndex:
    """A lower-cased text with its set of 3-character substrings (and 2-character ones when the text
    is not ASCII): most needle groups are rejected by one set intersection, without a substring search."""

    __slots__ = ("keys", "lowered", "present")

    def __init__(self, lowered: str) -> None:
        self.lowered = lowered
        keys = {lowered[i: i + 3] for i in range(len(lowered) - 2)}
        if not lowered.isascii():
            keys.update(lowered[i: i + 2] for i in range(len(lowered) - 1))
        self.keys = keys
        self.present: dict[int, frozenset[Group]] = {}  # by id(NeedleIndex): the groups found in bulk

    def groups_of(self, needle_index: NeedleIndex) -> frozenset[Group]:
        """The groups of ``needle_index`` present in this text (computed once, then looked up)."""
        found = self.present.get(id(needle_index))
        if found is None:
            found = self.present[id(needle_index)] = needle_index.present(self)
        return found


class NeedleIndex:
    """Every needle group of a rule set, indexed by each needle's key: a text's present groups are
    found with one set intersection and a substring check only for needles whose key occurs."""

    __slots__ = ("by_key", "groups", "keyset", "unkeyed")

    def __init__(self, groups: Iterable[Group]) -> None:
        self.groups = tuple(set(groups))
        self.by_key: dict[str, list[tuple[str, Group]]] = {}
        self.unkeyed: list[Group] = []
        for g in self.groups:
            g.owner = self
            if g.keyed:
                for needle, key in zip(g.needles, g.needle_keys, strict=True):
                    self.by_key.setdefault(key, []).append((needle, g))
            else:
                self.unkeyed.append(g)
        self.keyset = frozenset(self.by_key)

    def present(self, index: TextIndex) -> frozenset[Group]:
        contains = index.lowered.__contains__
        found = {g for g in self.unkeyed if any(map(contains, g.needles))}
        seen: dict[str, bool] = {}  # a needle shared by several groups is searched once
        for k in self.keyset.intersection(index.keys):
            for needle, g in self.by_key[k]:
                if g in found:
                    continue
                hit = seen.get(needle)
                if hit is None:
                    hit = seen[needle] = contains(needle)
                if hit:
                    found.add(g)
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
