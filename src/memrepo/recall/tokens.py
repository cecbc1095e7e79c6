"""Tokenising for recall: English words, identifiers and CJK text.

Latin-script text is split into words; a word joined by ``. - _ / : @ +`` (an identifier such
as ``registry.acme.io`` or ``flask-k8s-deploy``) yields its parts and the whole, and a
camelCase word yields its parts and the whole. Parts are lowercased, stop words dropped and
lightly stemmed (plural, ``-ed``, ``-ing``), so the same stem is produced on both sides.
Runs of Chinese, Japanese or Korean characters have no spaces to split on: each run yields
character unigrams and bigrams, so ``部署`` in a query matches ``用 flask 部署到 k8s``.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterator

_CJK_CLASS = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3040-\u30ff\u3100-\u312f\u3130-\u318f\u31a0-\u31ff"
    "\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uff9f"
)
_CJK_RUN = re.compile(f"[{_CJK_CLASS}]+")
_WORD = re.compile(r"[^\W_]+(?:[._\-/:@+#][^\W_]+)*")
_JOINERS = re.compile(r"[._\-/:@+#]")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_VOWELS = frozenset("aeiouy")

STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does",
    "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "no",
    "not", "of", "on", "or", "our", "so", "than", "that", "the", "their", "them", "then", "there", "these",
    "they", "this", "to", "us", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why",
    "will", "with", "would", "you", "your"
))
CJK_STOPWORDS = frozenset((
    "的", "了", "是", "吗", "呢", "吧", "啊", "么", "什么", "怎么", "哪个", "哪里", "为什么", "我们", "我", "你", "他", "她", "它", "の",
    "は", "が", "を", "に", "で", "と", "も", "か"
))


def normalise(text: str) -> str:
    """NFKC (full-width Latin becomes ASCII) without changing case."""
    return unicodedata.normalize("NFKC", text)


def stem(word: str) -> str:
    """A light, deterministic English stemmer: ``deployments`` -> ``deployment``, ``configured`` -> ``configur``."""
    if len(word) <= 3 or not word.isascii() or not word.isalpha():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for suffix in ("ing", "ed"):
        base = word[: -len(suffix)]
        if word.endswith(suffix) and len(base) >= 3 and _VOWELS.intersection(base):
            word = base
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz" and word[-1] not in _VOWELS:
                word = word[:-1]
            break
    if word.endswith("e") and len(word) > 4:
        word = word[:-1]
    return word


def _split_word(word: str) -> list[str]:
    """The lowercase parts of one word: ``registry.acme.io`` -> registry, acme, io; ``RecallIndex`` -> recall, index."""
    parts: list[str] = []
    for piece in _JOINERS.split(word):
        if piece.isascii() and piece.isalpha() and any(c.isupper() for c in piece[1:]) and any(c.islower() for c in piece):
            parts.extend(p.lower() for p in _CAMEL.findall(piece))
        elif piece:
            parts.append(piece.lower())
    return parts


_ENTITY = re.compile(r"[._\-/:@+#]|\d.*[^\W\d_]|[^\W\d_].*\d|^[A-Z]{2,}$|^[a-zA-Z]+[A-Z][a-zA-Z]*$")


@functools.lru_cache(maxsize=262144)
def is_entity(word: str) -> bool:
    """True for identifier-like words: joined parts, camelCase, letters with digits, or an acronym."""
    return bool(_JOINERS.search(word)) or (word.isascii() and bool(_ENTITY.search(word)))


def segments(text: str) -> Iterator[tuple[bool, str]]:
    """``(is_cjk, piece)`` for each CJK run and each Latin-script word, in order."""
    pos = 0
    text = normalise(text)
    for match in _CJK_RUN.finditer(text):
        for word in _WORD.findall(text[pos:match.start()]):
            yield False, word
        yield True, match.group()
        pos = match.end()
    for word in _WORD.findall(text[pos:]):
        yield False, word


@functools.lru_cache(maxsize=65536)
def cjk_grams(run: str) -> tuple[str, ...]:
    """Character unigrams and bigrams of one CJK run, without the stop characters."""
    grams = [c for c in run if c not in CJK_STOPWORDS]
    grams.extend(run[i:i + 2] for i in range(len(run) - 1) if run[i:i + 2] not in CJK_STOPWORDS)
    return tuple(grams)


@functools.lru_cache(maxsize=262144)
def word_tokens(word: str) -> tuple[str, ...]:
    """BM25 tokens of one Latin-script word: stemmed parts without stop words, then the whole if it has parts."""
    parts = _split_word(word)
    out = tuple(stem(p) for p in parts if p not in STOPWORDS)
    return out + (word.lower(),) if len(parts) > 1 else out


def analyse(text: str) -> tuple[list[str], set[str]]:
    """``(tokenize(text), entities(text))`` in one pass."""
    tokens: list[str] = []
    ents: set[str] = set()
    for is_cjk, piece in segments(text):
        if is_cjk:
            tokens.extend(cjk_grams(piece))
        else:
            tokens.extend(word_tokens(piece))
            if is_entity(piece):
                ents.add(piece.lower())
    return tokens, ents


def tokenize(text: str) -> list[str]:
    """BM25 tokens of ``text`` (with repeats, in order)."""
    return analyse(text)[0]


def entities(text: str) -> set[str]:
    """Identifier-like words of ``text``, lowercased whole: ``registry.acme.io``, ``k8s``, ``JWT``, ``RecallIndex``."""
    return analyse(text)[1]


def query_words(text: str) -> set[str]:
    """Every whole word of a query, lowercased: what may equal an entity of an entry."""
    return {piece.lower() for is_cjk, piece in segments(text) if not is_cjk}


def units(text: str) -> list[str]:
    """The sequence a tag is matched on: stemmed Latin parts and whole CJK runs."""
    out: list[str] = []
    for is_cjk, piece in segments(text):
        out.extend([piece] if is_cjk else [stem(p) for p in _split_word(piece)])
    return out


def tag_key(tag: str) -> str:
    """The normal form of a tag: ``Docker-Registry`` and ``docker registries`` share ``docker registry``."""
    return " ".join(units(tag.lstrip("#")))


def query_tag_keys(text: str, longest: int = 4, longest_cjk: int = 8) -> set[str]:
    """Every key a tag could have if the query names it: n-grams of units and substrings of CJK runs."""
    seq = units(text)
    keys = {" ".join(seq[i:i + n]) for n in range(1, longest + 1) for i in range(len(seq) - n + 1)}
    for unit in seq:
        if _CJK_RUN.fullmatch(unit):
            keys.update(unit[i:j] for i in range(len(unit)) for j in range(i + 1, min(len(unit), i + longest_cjk) + 1))
    return keys


def tag_coverage(text: str, matched: set[str]) -> float:
    """How much of a query (by characters of its content words) the matched tag keys spell out.

    1.0 for a query that only names tags (``docker registry``, ``部署``); low for a question
    that merely mentions a tag word among others.
    """
    covered = total = 0
    matched_units = {u for key in matched for u in key.split(" ")}
    for unit in units(text):
        if unit in STOPWORDS:
            continue
        total += len(unit)
        if unit in matched_units:
            covered += len(unit)
        elif _CJK_RUN.fullmatch(unit):
            covered += max((len(key) for key in matched if key in unit), default=0)
    return covered / total if total else 0.0
