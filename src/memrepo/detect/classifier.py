"""Learned layer: a linear classifier over word and character n-grams, in pure Python.

Patterns name phrasings; this layer generalises over them. The model is data
(``policies/models/injection.json``, trained offline by ``bench/train_detector.py``): a bias, a
threshold and the weights, so inference is a look-up per n-gram and a sum, with no numpy.
Since release 9 (format ``memrepo-hashed-v3``) the weights are a table of 2**20 buckets: a
feature's weight is its bucket's, the bucket being the CRC-32 of the feature's UTF-8 (the hashing
trick; training hashed the same way, so features that share a bucket were fitted together). Every
trained weight ships (150,000 and more) yet start-up builds no dictionary of strings: the table
loads as one array. Older models (v1, v2: a dictionary of the 10,000 largest weights) still load.

Features of a (normalised, lower-cased) text, quoted spans blanked as in the scoring layer:

* ``w:<word>``            a word (CJK text: each character is a word);
* ``b:<word> <word>``     two consecutive words (CJK: character bigrams);
* ``c:<4 chars>``         character 4-grams of each word (not CJK) padded with spaces
                          (inflections: "ignorieren", "oubliez", "olvídate" share stems).

Since release 12 (format ``memrepo-hashed-v4``) a word keeps its combining marks: Devanagari,
Bengali, Tamil, Sinhala, Thai, Lao, Burmese and Khmer write vowels as marks, which ``\\w`` does not
match, so "कोई" was read as the words "क" and "ई" and a Thai phrase (no spaces between words) as
fragments. Now such a word stays whole, and a Thai, Lao, Burmese or Khmer phrase is one "word"
whose character 4-grams carry what it says. v3 models keep the old split (they were trained on it).

A text is scored per window of one or two consecutive sentences; the best window decides, so a
long benign entry does not dilute an order hidden in one sentence of it.
"""
from __future__ import annotations

import base64
import binascii
import json
import math
import re
import sys
import zlib
from array import array
from collections.abc import Mapping
from functools import lru_cache
from itertools import chain, pairwise
from typing import Any, NamedTuple

from ..errors import ParseError
from ..model.text import CJK_RE
from .rxcache import compile_cached
from .scoring import unquoted_lower

DEFAULT_MODEL = "models/injection.json"
FORMAT = "memrepo-hashed-v4"
# Each format the loader reads: whether it folds digits (v2, release 7, reads every digit as 0, so a
# date, a port or an id ("svc-202", "2024") is a number, not a word of its own the model can overfit
# to) and whether its words keep combining marks (v4, release 12).
FORMATS = {"memrepo-linear-v1": (False, False), "memrepo-linear-v2": (True, False),
           "memrepo-hashed-v3": (True, False), FORMAT: (True, True)}
HASHED = frozenset({"memrepo-hashed-v3", FORMAT})  # formats whose weights are a table of buckets
HASH_BITS = 20  # buckets of a hashed model: 2**20, so that few of ~150,000 trained features share one
_FOLD_DIGITS = str.maketrans("123456789", "000000000")
_NONZERO_DIGIT_RE = compile_cached("[1-9]")
# ASCII text without an apostrophe: its words (what _TOKEN_RE finds) are its runs of letters and
# digits, so every other character becomes a space and str.split finds them (one pass each, in C;
# the regex costs twice as much). The second table reads every digit as 0 in the same pass.
_NOT_ALNUM = {c: " " for c in range(128) if not chr(c).isalnum()}
_ASCII_SPLIT = str.maketrans(_NOT_ALNUM)
_ASCII_FOLD_SPLIT = str.maketrans({**_NOT_ALNUM, **{ord(d): "0" for d in "123456789"}})


def _folded(text: str) -> str:
    """Every ASCII digit read as 0 (v2+ models). ``str.translate`` looks each character up in a
    table once the text holds any non-ASCII one; a regex replaces only the digits there."""
    return text.translate(_FOLD_DIGITS) if text.isascii() else _NONZERO_DIGIT_RE.sub("0", text)
MAX_WINDOWS = 64
MEMO_WORDS = 50_000  # words whose weighted features are remembered (then the memo starts again)

_TOKEN_RE = compile_cached(r"[^\W_]+(?:['’][^\W_]+)?")
# Combining marks (and the letters around them) of the scripts that write vowels as marks: Indic
# (U+0900-0DFF without the dandas), Thai, Lao, Burmese and Khmer (without their punctuation), plus
# Hebrew points, Arabic harakat and the generic combining blocks.
_MARKS = ("\u0300-\u036f\u0483-\u0489\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u0610-\u061a"
          "\u064b-\u065f\u0670\u06d6-\u06dc\u06df-\u06e4\u06e7\u06e8\u06ea-\u06ed\u0900-\u0963\u0966-\u096f"
          "\u0971-\u0df3\u0e00-\u0e4e\u0e50-\u0e59\u0e80-\u0eff\u1000-\u1049\u1050-\u109f\u1780-\u17d3"
          "\u17dc\u17dd\u17e0-\u17e9\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f")
_CJK_RE = CJK_RE
_SENTENCE_RE = compile_cached(r"(?:[^.!?;。！？；\n]+|[.!?](?=[^\s.!?]))+[.!?。！？;；]*")  # as scoring's, with ; too


@lru_cache(maxsize=1)
def _marked_token_re() -> re.Pattern[str]:
    """The words of a text with combining marks (v4): compiled on first use, as an ASCII text never needs it."""
    return compile_cached(f"(?:[^\\W_]|[{_MARKS}])+(?:['’](?:[^\\W_]|[{_MARKS}])+)?")


@lru_cache(maxsize=1)
def _marked_words_re() -> re.Pattern[str]:
    """_marked_token_re()'s words in a text without "_" (marks are not \\w): one class repeated, twice
    as fast (compiled on first use: ~7 M instructions that an ASCII text never needs)."""
    return compile_cached(f"[\\w{_MARKS}]+(?:['’][\\w{_MARKS}]+)?")


def tokens(text: str, marks: bool = False) -> list[str]:
    """The words of ``text`` (CJK: each character); ``marks``: words keep their combining marks (v4)."""
    if text.isascii():  # no CJK to split into characters, no marks
        return _TOKEN_RE.findall(text) if "'" in text else text.translate(_ASCII_SPLIT).split()
    found = ((_marked_words_re() if "_" not in text else _marked_token_re()) if marks else _TOKEN_RE).findall(text)
    if max(text) < "\u3040":
        return found  # no CJK character (they begin at U+3040): no word to split
    out: list[str] = []
    for tok in found:
        if not tok.isascii() and _CJK_RE.search(tok):
            out.extend(tok)
        else:
            out.append(tok)
    return out


def _words(text: str, fold_digits: bool, marks: bool) -> list[str]:
    """``tokens(_folded(text) if fold_digits else text, marks)``: for ASCII text without an
    apostrophe, one translation (digits folded, the rest split) and str.split."""
    if fold_digits and text.isascii() and "'" not in text:
        return text.translate(_ASCII_FOLD_SPLIT).split()
    return tokens(_folded(text) if fold_digits else text, marks)


def features(text: str, fold_digits: bool = True, marks: bool = True) -> set[str]:
    """The feature strings of ``text`` (already normalised and lower-cased); the defaults are the
    current format's (training uses them)."""
    toks = _words(text, fold_digits, marks)
    feats = {"w:" + t for t in toks}
    feats.update("b:" + a + " " + b for a, b in pairwise(toks))
    for t in toks:
        if len(t) >= 3 and not _CJK_RE.match(t):
            padded = " " + t + " "
            feats.update("c:" + padded[i: i + 4] for i in range(len(padded) - 3))
    return feats


def prepare(text: str) -> str:
    """What features are taken from: lower-cased, short quoted spans blanked as the scoring layer
    does (a memory that *mentions* a phrase in quotes is not giving that order)."""
    return unquoted_lower(text)


def windows(text: str) -> list[tuple[int, str]]:
    """Sentences (start, text) of ``text``; scoring looks at each and each consecutive pair."""
    return [(m.start(), m.group(0)) for m in _SENTENCE_RE.finditer(text) if m.group(0).strip()][:MAX_WINDOWS]


class Verdict(NamedTuple):
    probability: float
    start: int
    excerpt: str
    features: Mapping[str, float]  # the window's weighted features
    hashed: bool = False  # from a hashed (v3, v4) model
    marks: bool = True  # the model's words keep combining marks (v4)

    @property
    def known_words(self) -> float:
        """The share of the window's words that have a weight (computed when the veto asks). In a
        hashed table a word the model never saw still lands in some bucket, often a used one, so
        "has a weight" no longer means "was trained on" and a count of known features alone would
        not tell a language the model never saw; a dictionary model: 1.0 (its count tells)."""
        if not self.hashed:
            return 1.0
        words = set(_words(prepare(self.excerpt), True, self.marks))
        return sum(1 for f in self.features if f.startswith("w:")) / max(1, len(words))

    @property
    def top(self) -> tuple[tuple[str, float], ...]:
        """The features that pushed the score up most (computed when a finding needs them)."""
        best = sorted(((f, w) for f, w in self.features.items() if w > 0), key=lambda x: (-x[1], x[0]))[:6]
        return tuple((f, round(w, 3)) for f, w in best)


def bucket(feature: str, mask: int = (1 << HASH_BITS) - 1) -> int:
    """The table bucket of ``feature`` in a hashed model (training uses this function too)."""
    return zlib.crc32(feature.encode("utf-8", "surrogatepass")) & mask


class HashedWeights:
    """A hashed model's weights: ``table[bucket(feature)] * scale`` (int16 buckets); a zero bucket
    holds no weight, so such a feature is unknown to the model, as a missing key of a v1/v2 model."""

    __slots__ = ("mask", "scale", "table")

    def __init__(self, table: array | memoryview, scale: float, bits: int) -> None:
        self.table = table
        self.scale = scale
        self.mask = (1 << bits) - 1

    def get(self, feature: str, default: float | None = None) -> float | None:
        q = self.table[bucket(feature, self.mask)]
        return q * self.scale if q else default


class Model:
    """A linear model: ``p = sigmoid(bias + sum(weights[f] for f in features(window)))``."""

    def __init__(self, bias: float, weights: Mapping[str, float] | HashedWeights, threshold: float, veto: float | None = None,
                 fold_digits: bool = True, marks: bool = True) -> None:
        self.bias = bias
        self.fold_digits = fold_digits
        self.marks = marks
        self.weights = weights
        self.threshold = threshold  # at or above: a finding of its own
        self.veto = veto  # below: pattern findings of the veto categories are demoted to warnings
        self._memo: dict[str, tuple[tuple[str, float], ...]] = {}
        self._pairs: dict[tuple[str, str], tuple[str, float] | tuple[()]] = {}
        self._gram_memo: dict[str, tuple[tuple[str, float], ...]] = {}  # a 4-gram's ((feature, weight),) or ()
        self._gram_set: frozenset[str] | None = None

    def _token_features(self, tok: str) -> tuple[tuple[str, float], ...]:
        """The weighted features of one word alone (``w:`` and ``c:``) with their weights,
        remembered per model (weighted_features empties the memo when it is full)."""
        got = self._memo.get(tok)
        if got is None:
            get = self.weights.get
            feat = "w:" + tok
            w = get(feat)
            own: tuple[tuple[str, float], ...] = () if w is None else ((feat, w),)
            if len(tok) < 3 or _CJK_RE.match(tok):
                got = self._memo[tok] = own
                return got
            padded = " " + tok + " "
            grams = list({padded[i: i + 4] for i in range(len(padded) - 3)})
            if not isinstance(self.weights, HashedWeights):
                have = self._grams()
                grams = [g for g in grams if g in have]  # a dictionary model: only the grams it has
            # a new word's 4-grams were mostly met in other words ("ing ", " the"): their weights
            # are remembered per gram (a hashed look-up encodes the feature and takes its CRC-32)
            memo = self._gram_memo
            parts = list(map(memo.get, grams))
            if None in parts:
                if len(memo) + len(grams) >= MEMO_WORDS:
                    memo.clear()
                for i, g in enumerate(grams):
                    if parts[i] is None:
                        feat = "c:" + g
                        w = get(feat)
                        parts[i] = memo[g] = () if w is None else ((feat, w),)
            got = self._memo[tok] = (*own, *chain.from_iterable(parts))  # type: ignore[arg-type]
        return got

    def _grams(self) -> frozenset[str]:
        """The character 4-grams that carry a weight (without their ``c:`` prefix), of a dictionary model."""
        if self._gram_set is None:
            self._gram_set = frozenset(f[2:] for f in self.weights if f.startswith("c:"))  # type: ignore[union-attr]
        return self._gram_set

    def weighted_features(self, text: str) -> dict[str, float]:
        """``features(text)`` restricted to those with a weight, with their weights: the same logit,
        fewer strings."""
        toks = _words(text, self.fold_digits, self.marks)
        memo = self._memo
        if len(memo) + len(toks) >= MEMO_WORDS:
            memo.clear()  # before the words are looked up, never between them
        for t in toks:
            if t not in memo:
                self._token_features(t)
        feats: dict[str, float] = dict(chain.from_iterable(map(memo.__getitem__, toks)))  # most words were met before
        # bigrams met before, by word pair: (feature, weight), or () without a weight (a hashed
        # look-up is a CRC-32 of the feature string); the words' pairs are looked up in C
        pairs = self._pairs
        bigrams = list(pairwise(toks))
        got = list(map(pairs.get, bigrams))
        if None in got:
            if len(pairs) + len(bigrams) >= 4 * MEMO_WORDS:
                pairs.clear()
            get = self.weights.get
            for i, pair in enumerate(bigrams):
                if got[i] is None:
                    f = "b:" + pair[0] + " " + pair[1]
                    w = get(f)
                    got[i] = pairs[pair] = () if w is None else (f, w)
        feats.update(filter(None, got))  # type: ignore[arg-type]
        return feats

    def logit(self, feats: set[str]) -> float:
        get = self.weights.get
        return self.bias + math.fsum(w for f in feats if (w := get(f)) is not None)

    def probability(self, text: str) -> float:
        """The probability that ``text`` (one short text, normalised) is an injection."""
        return _sigmoid(self.logit(features(prepare(text), self.fold_digits, self.marks)))

    def best_window(self, text: str) -> Verdict | None:
        """The highest-scoring window of one or two sentences of ``text``."""
        prepared = prepare(text)
        sents = windows(prepared)
        if not sents:
            return None
        feats = [self.weighted_features(s) for _, s in sents]
        # Sums per sentence; a pair's sum subtracts what both share (features are binary). fsum: the
        # sum does not depend on the order the features were met in, so windows that tie stay tied.
        sums = [math.fsum(fs.values()) for fs in feats]
        best_logit, best_i, best_n = -math.inf, 0, 1
        for i in range(len(sents)):
            if sums[i] + self.bias > best_logit:
                best_logit, best_i, best_n = sums[i] + self.bias, i, 1
            if i + 1 < len(sents):
                a, b = feats[i], feats[i + 1]
                z = self.bias + sums[i] + sums[i + 1] - math.fsum(a[f] for f in (a.keys() & b.keys()))
                if z > best_logit:
                    best_logit, best_i, best_n = z, i, 2
        fs = feats[best_i] if best_n == 1 else feats[best_i] | feats[best_i + 1]
        start = sents[best_i][0]
        end = sents[best_i + best_n - 1][0] + len(sents[best_i + best_n - 1][1])
        return Verdict(_sigmoid(best_logit), start, text[start:end].strip(), fs, isinstance(self.weights, HashedWeights), self.marks)


def _sigmoid(z: float) -> float:
    if z >= 0:
        return 1.0 / (1.0 + math.exp(-z))
    e = math.exp(z)
    return e / (1.0 + e)


def load_model(files: Mapping[str, bytes], name: str, threshold: float | None = None) -> Model:
    """The model stored at ``policies/<name>`` (else memrepo's shipped copy of that name)."""
    data = files.get(name)
    if data is None:
        data = _shipped(name)
    doc = _model_fields(data, name)
    veto = doc.get("veto")
    weights = _hashed_weights(data, name) if doc["format"] in HASHED else _parse_model(data, name)["weights"]
    fold_digits, marks = FORMATS[doc["format"]]
    return Model(float(doc["bias"]), weights, float(doc["threshold"] if threshold is None else threshold),
                 None if veto is None else float(veto), fold_digits=fold_digits, marks=marks)


@lru_cache(maxsize=4)
def _model_key(data: bytes) -> str:
    from .cache import content_key

    return content_key([("", data)])


@lru_cache(maxsize=4)
def _model_fields(data: bytes, name: str) -> dict[str, Any]:
    """The model's fields but its weights, validated once and kept in the detect cache (beside a hashed
    model's table: its file is a megabyte of base64 that a process with both cached never parses)."""
    from .cache import cached

    def build() -> dict[str, Any]:
        fields = {k: v for k, v in _parse_model(data, name).items() if k not in ("table", "weights")}
        problem = _fields_problem(fields)
        if problem:
            raise ParseError(f"classifier model's {problem}", where=f"policies/{name}",
                             hint="re-run bench/train_detector.py, or restore memrepo's shipped model")
        return fields

    fields = cached("model-fields", _model_key(data), build)
    if _fields_problem(fields):
        return build()  # a cache file of another shape (another version, a hand edit): read the model itself
    return fields  # type: ignore[no-any-return]


def _fields_problem(fields: Any) -> str | None:
    """What is wrong with a model's fields but its weights (None: nothing), before any is used."""
    if not isinstance(fields, dict) or fields.get("format") not in FORMATS:
        return "format is not one this memrepo reads"
    hashed = fields["format"] in HASHED
    for key in ("bias", "threshold", "veto", *(("scale",) if hashed else ())):
        value = fields.get(key)
        if not (isinstance(value, (int, float)) and not isinstance(value, bool) or key == "veto" and value is None):
            return f"{key} is not a number"
    if hashed and (not isinstance(fields.get("bits"), int) or isinstance(fields["bits"], bool)):
        return "bits is not an integer"
    return None


def encode_table(table: array) -> str:
    """A hashed model's ``table`` field: the int16 buckets, little-endian, zlib-compressed, base64."""
    data = array("h", table)
    if sys.byteorder == "big":
        data.byteswap()
    return base64.b64encode(zlib.compress(data.tobytes(), 9)).decode("ascii")


@lru_cache(maxsize=4)
def _hashed_weights(data: bytes, name: str) -> HashedWeights:
    """The table of a hashed model: decompressed once and kept in the detect cache (see cache.py), then
    mapped as it lies (a memoryview of int16, no copy) on little-endian machines."""
    from .cache import cached_bytes

    doc = _model_fields(data, name)
    where = f"policies/{name}"
    hint = "re-run bench/train_detector.py, or restore memrepo's shipped model"
    try:
        bits, scale = int(doc["bits"]), float(doc["scale"])
        if not 8 <= bits <= 24:
            raise ValueError(f"bits is {bits}, not 8-24")
        raw = cached_bytes("model-table", _model_key(data),
                           lambda: zlib.decompress(base64.b64decode(_parse_model(data, name)["table"])), 2 << bits,
                           mapped=sys.byteorder == "little")  # bad base64 or data: zlib.error
    except (KeyError, TypeError, ValueError, binascii.Error, zlib.error) as exc:
        raise ParseError(f"classifier model's weight table is unreadable: {exc}", where=where, hint=hint) from None
    if len(raw) != 2 << bits:
        raise ParseError(f"classifier model's table has {len(raw) // 2} buckets, not 2**{bits}", where=where, hint=hint)
    table: array | memoryview
    if sys.byteorder == "little":
        table = memoryview(raw).cast("h")
    else:
        table = array("h", raw)
        table.byteswap()
    return HashedWeights(table, scale, bits)


@lru_cache(maxsize=4)
def _shipped(name: str) -> bytes:
    from ..resources import default_policies_dir

    path = default_policies_dir() / name
    try:
        return path.read_bytes()
    except OSError:
        raise ParseError(f"classifier model {name} not found", where=f"policies/{name}",
                         hint="restore it from memrepo's defaults, or set scan.model: null in policy.yaml") from None


@lru_cache(maxsize=4)
def _parse_model(data: bytes, name: str) -> dict[str, Any]:
    where = f"policies/{name}"
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ParseError(f"classifier model is not JSON: {exc}", where=where, hint="re-run bench/train_detector.py") from None
    if not isinstance(doc, dict) or doc.get("format") not in FORMATS or \
            not (isinstance(doc.get("table"), str) if doc["format"] in HASHED else isinstance(doc.get("weights"), dict)):
        raise ParseError(f"classifier model is not in a format this memrepo reads ({', '.join(FORMATS)})", where=where,
                         hint="re-run bench/train_detector.py, or restore memrepo's shipped model")
    return doc
