"""Contradiction detection for tag and conclusion conflicts. Pure: no git, no I/O.

A practical, explainable detector rather than a language model: two texts contradict when
they talk about the same subject (enough shared content words) and either

* one is negated and the other is not ("uses tabs" / "does not use tabs", "不用" / "用"),
* they hold an antonym pair ("prefers concise" / "prefers verbose", "always" / "never"),
* or they state different numbers about the same thing ("timeout is 30s" / "timeout is 60s").

The word lists are small on purpose; a reviewer sees the reason with every finding.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..model.text import CJK_RE

_TOKEN = re.compile(r"\d+(?:[.,:]\d+)*|[^\W\d_]+", re.UNICODE)
_CJK = CJK_RE
NEGATORS = frozenset({"not", "no", "never", "don't", "dont", "doesn't", "doesnt", "isn't", "isnt", "aren't", "arent",
                      "won't", "wont", "cannot", "can't", "cant", "shouldn't", "without", "nor", "none", "n't",
                      "不", "没", "别", "勿", "非", "无", "未", "莫"})
STOPWORDS = frozenset(["a", "an", "the", "is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "to", "of", "in", "on", "at", "for", "with", "by", "from", "and", "or", "but", "as", "it", "its", "this", "that", "these", "those", "there", "here", "he", "she", "they", "them", "his", "her", "their", "our", "we", "you", "your", "i", "me", "my", "user", "user's", "users", "has", "have", "had", "will", "would", "should", "can", "could", "may", "might", "must", "shall", "also", "very", "more", "most", "just", "only", "so", "than", "then", "into", "about", "over", "under", "up", "down", "out", "off", "all", "any", "each", "every", "some", "such", "own", "same", "other", "s", "t", "的", "了", "是", "在", "和", "也", "都", "要", "用户"])
ANTONYMS = (("concise", "verbose"), ("concise", "detailed"), ("short", "long"), ("brief", "detailed"),
            ("brief", "lengthy"), ("likes", "dislikes"), ("like", "dislike"), ("likes", "hates"), ("love", "hate"),
            ("loves", "hates"), ("prefers", "avoids"), ("always", "never"), ("enable", "disable"),
            ("enabled", "disabled"), ("allow", "forbid"), ("allowed", "forbidden"), ("formal", "casual"),
            ("formal", "informal"), ("tabs", "spaces"), ("true", "false"), ("yes", "no"), ("on", "off"),
            ("light", "dark"), ("morning", "evening"), ("early", "late"), ("increase", "decrease"),
            ("简洁", "详细"), ("喜欢", "讨厌"), ("总是", "从不"), ("开启", "关闭"), ("正式", "随意"))


@dataclass(frozen=True)
class Contradiction:
    reason: str  # "negation" | "antonym" | "value"
    detail: str

    def __str__(self) -> str:
        return f"{self.reason}: {self.detail}"


def _tokens(text: str) -> list[str]:
    norm = unicodedata.normalize("NFKC", text).casefold().replace("’", "'")
    norm = re.sub(r"(\w)n't\b", r"\1 n't", norm)
    out: list[str] = []
    for tok in _TOKEN.findall(norm) + re.findall(r"n't", norm):
        if _CJK.search(tok):
            out.extend(_cjk_words(tok))
        else:
            out.append(tok)
    return out


def _cjk_words(run: str) -> list[str]:
    """Known two-character words (antonyms, negated verbs) first, then single characters."""
    known = {w for pair in ANTONYMS for w in pair if _CJK.search(w)}
    out, i = [], 0
    while i < len(run):
        if run[i:i + 2] in known:
            out.append(run[i:i + 2])
            i += 2
        else:
            out.append(run[i])
            i += 1
    return out


def _numbers(tokens: Iterable[str]) -> set[str]:
    return {t for t in tokens if t[0].isdigit()}


def _content(tokens: Iterable[str]) -> set[str]:
    return {t for t in tokens if t not in STOPWORDS and t not in NEGATORS and not t[0].isdigit() and t != "n't"}


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def contradiction(a: str, b: str) -> Contradiction | None:
    """Why ``a`` and ``b`` contradict each other, or None."""
    ta, tb = _tokens(a), _tokens(b)
    ca, cb = {_stem(w) for w in _content(ta)}, {_stem(w) for w in _content(tb)}
    if not ca or not cb:
        return None
    antonym = _antonym(set(ta), set(tb))
    shared = ca & cb
    overlap = len(shared) / min(len(ca), len(cb))
    if antonym and shared and overlap >= 0.25:
        return Contradiction("antonym", f"{antonym[0]!r} vs {antonym[1]!r} about {', '.join(sorted(shared))}")
    if len(shared) < 1 or overlap < 0.5:
        return None
    neg_a, neg_b = _negated(ta), _negated(tb)
    if neg_a != neg_b:
        return Contradiction("negation", f"one says no, the other yes, about {', '.join(sorted(shared))}")
    na, nb = _numbers(ta), _numbers(tb)
    if na and nb and na != nb and len(shared) / len(ca | cb) >= 0.5:
        return Contradiction("value", f"{', '.join(sorted(na - nb) or sorted(na))} vs {', '.join(sorted(nb - na) or sorted(nb))} "
                                      f"about {', '.join(sorted(shared))}")
    return None


def _negated(tokens: Sequence[str]) -> bool:
    return sum(1 for t in tokens if t in NEGATORS) % 2 == 1


def _antonym(a: set[str], b: set[str]) -> tuple[str, str] | None:
    for x, y in ANTONYMS:
        if (x in a and y in b and y not in a and x not in b) or (y in a and x in b and x not in a and y not in b):
            return (x, y) if x in a else (y, x)
    return None


def shares_tag(a: Iterable[str], b: Iterable[str]) -> set[str]:
    return {t.casefold() for t in a} & {t.casefold() for t in b}
