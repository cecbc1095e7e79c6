"""Normalisation pipeline: reveal text that obfuscation hides from plain patterns.

Two kinds of steps:

* a *canonical chain* applied cumulatively (``nfkc`` -> ``invisible`` -> ``confusables`` ->
  ``leetspeak`` -> ``spacing``); each output that differs from the previous one is scanned and
  labelled with the step that produced it;
* *decoders* that extract hidden payloads (``base64``, ``base32``, ``hex``, ``url-encoded``,
  ``escapes`` (``\\u0041``, ``&#65;``, ``&#x41;``), ``binary``, ``char-codes``
  (``String.fromCharCode(104, 105)``), ``rot13``, ``reversed``, ``html-hidden``, ``joined`` (a
  sentence split across the cells of a markdown table or the items of a list) and tag-character
  smuggling under ``invisible``); each payload is run through the canonical chain
  again and labelled with the decoder (``base64+leetspeak`` when both helped).

Decoded payloads are capped (``MAX_PAYLOAD_CHARS``) and only language-like output is kept, so
random blobs (hashes, keys) are not rescanned.
"""
from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from functools import lru_cache
from typing import NamedTuple

from .rxcache import compile_cached

MAX_PAYLOAD_CHARS = 4096
_ROT13 = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
                       "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm")
MAX_PAYLOADS = 16

# Zero-width, word joiner and invisible operators, BOM, bidi embeddings/overrides/isolates, soft hyphen.
_INVISIBLE_RE = compile_cached("[\u00ad\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\U000e0000-\U000e007f]")
_TAG_RUN_RE = compile_cached("[\U000e0020-\U000e007e]{3,}")
_BIDI = set("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

# Lookalikes of Latin letters (Cyrillic, Greek, a few others) folded to ASCII.
_CONFUSABLES = str.maketrans({
    "а": "a", "в": "b", "е": "e", "ё": "e", "к": "k", "м": "m", "н": "h", "о": "o", "р": "p", "с": "c", "т": "t",
    "у": "y", "х": "x", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "ԁ": "d", "ɡ": "g", "һ": "h", "ӏ": "l", "ԛ": "q", "ԝ": "w",
    "А": "A", "В": "B", "Е": "E", "К": "K", "М": "M", "Н": "H", "О": "O", "Р": "P", "С": "C", "Т": "T", "Х": "X",
    "У": "Y", "Ѕ": "S", "І": "I", "Ј": "J", "Ԁ": "D",
    "α": "a", "ο": "o", "ν": "v", "ρ": "p", "τ": "t", "ι": "i", "κ": "k", "υ": "u", "ε": "e", "χ": "x", "ω": "w",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "I", "Κ": "K", "Μ": "M", "Ν": "N", "Ο": "O", "Ρ": "P",
    "Τ": "T", "Υ": "Y", "Χ": "X",
    "ı": "i", "ȷ": "j", "ℓ": "l", "ß": "ss",
})
_NON_ASCII_LETTER_RE = compile_cached(r"[^\x00-\x7f]")


@lru_cache(maxsize=1)
def _confusable_re() -> re.Pattern[str]:
    """Any lookalike (compiled on the first non-ASCII text): a text holding none has nothing to fold."""
    from .rxcache import compile_cached

    return compile_cached("[" + "".join(re.escape(chr(c)) for c in sorted(_CONFUSABLES)) + "]")

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s",
                       "!": "i", "|": "l", "€": "e"})
# A word where leet digits/symbols stand between letters ("1nstruct10ns", "f0rg3t", "y0ur") or a
# leading digit stands for a letter ("0bey"); version-like tokens ("v3", "ed25519", "utf8") stay.
_LEET_TOKEN_RE = compile_cached(
    r"(?<![\w@$!|€])(?:[A-Za-z]+[013457@$!|€]{1,2}(?=[A-Za-z013457@$!|€]*[A-Za-z](?![\w@$!|€]))[A-Za-z013457@$!|€]*"
    r"|[013457][A-Za-z]{3,}[A-Za-z013457@$!|€]*)(?![\w@$!|€])")

# A whole token of letters and leet characters holding both: it has a letter next to a leet
# character, so it opens with letters then a leet one, or leet ones then a letter (one pass, no
# lookaheads rescanning each token: a third faster than the two-lookahead form it replaces).
# What both need: a letter next to a leet character. Both patterns match whole tokens (runs of word
# characters and leet symbols), so only the tokens around these pairs are read, not every position.
_LEET_PAIR_RE = compile_cached(r"[A-Za-z][013457@$!|€]|[013457@$!|€][A-Za-z]")
_LEET_WORD = "_@$!|€"  # beside str.isalnum (re's \w): the characters of a token
_LEET_ANY_RE = compile_cached(r"(?<![\w@$!|€])(?:[A-Za-z]+[013457@$!|€]|[013457@$!|€]+[A-Za-z])[A-Za-z013457@$!|€]*(?![\w@$!|€])")

# Runs of single letters separated by one space/dot/dash ("d i s r e g a r d"); word gaps are 2+ spaces.
_SPACED_RE = compile_cached(r"(?<!\w)(?:\w[ .\-_*]){3,}\w(?!\w)")
# What every such run holds (two single characters between three spacers): re tries this only at a
# spacer, where _SPACED_RE tries every position; most texts hold none, a fifth of the cost.
_SPACED_HINT_RE = compile_cached(r"[ .\-_*]\w[ .\-_*]\w[ .\-_*]")
_SPACED_SHORT_RE = compile_cached(r"(?<!\w)(?:\w[ .\-_*])+\w(?!\w)")
_MARK_SPACER_RE = compile_cached(r"[.\-_*]")
_SPACED_ANY_RE = compile_cached(r"(?<!\S)\S(?: \S)+(?!\S)")  # single characters, one space apart
_WORD_GAP_RE = compile_cached(r"(?<=\S) {2,}(?=\S)")

# Runs of the characters that base64, base32 and secret tokens are written in: those decoders and
# the secrets scan look only inside runs of 16 or more, found in one scan per text (token_runs) where
# each ran over the whole text (every such pattern's match lies inside one run; its look-arounds see
# the real text before a run and a non-run character after it).
_TOKEN_RUN_RE = compile_cached(r"[A-Za-z0-9+/=_.:-]{16,}")
_B64_RE = compile_cached(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])")
_B32_RE = compile_cached(r"(?<![A-Za-z0-9=])[A-Z2-7]{16,}={0,6}(?![A-Za-z0-9=])")
# runs of URL-safe characters and %XX escapes; decoded when they hold at least four escapes
_URL_RE = compile_cached(r"(?:%[0-9A-Fa-f]{2}|[A-Za-z0-9._~+/:=?&-]){12,}")
_ESCAPES_RE = compile_cached(r"(?:\\u[0-9a-fA-F]{4}|&#[0-9]{2,7};|&#[xX][0-9a-fA-F]{2,6};){4,}")
_BINARY_RE = compile_cached(r"(?<![01])(?:[01]{8}[ ]?){4,}(?![01])")
_CHAR_CODES_RE = compile_cached(r"fromCharCode\s*\(\s*(\d{1,6}(?:\s*,\s*\d{1,6}){3,})\s*\)|\bchr\(\s*\d{2,3}\s*\)(?:\s*\+\s*chr\(\s*\d{2,3}\s*\)){3,}")
_HEX_RE = compile_cached(r"(?:\\x[0-9a-fA-F]{2}){8,}|(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}[ :]?){12,}(?![0-9a-fA-F])")
# Necessary conditions, each one scan of a character class without the look-behind that makes the
# patterns above try every position: a text without such a run cannot hold their matches.
_HEX_HINT_RE = compile_cached(r"[0-9a-fA-F :]{24,}")
_B32_HINT_RE = compile_cached(r"[A-Z2-7]{16,}")
_BINARY_HINT_RE = compile_cached(r"[01]{8}")

_HTML_COMMENT_RE = compile_cached(r"<!--(.*?)(?:-->|$)", re.DOTALL)
_HTML_HIDDEN_RE = compile_cached(
    r"<(\w+)\b[^>]*?(?:\bhidden\b|aria-hidden\s*=\s*[\"']?true|display\s*:\s*none|visibility\s*:\s*hidden|"
    r"font-size\s*:\s*0(?![.\d]*[1-9])|opacity\s*:\s*0(?![.\d]*[1-9])|color\s*:\s*(?:white|#fff\b|#ffffff))[^>]*>(.*?)</\1\s*>",
    re.DOTALL | re.IGNORECASE)
_TAG_STRIP_RE = compile_cached(r"<[^>]{0,200}>")

# the words language_score reads (runs of a-z), found in C: every other character (a non-ASCII one
# encoded as "?") becomes a space
_NOT_LOWER_LETTER = bytes.maketrans(bytes(range(256)), bytes(c if 97 <= c <= 122 else 32 for c in range(256)))


def _lower_words(lowered: str) -> list[str]:
    """``re.findall("[a-z]+", lowered)`` (a lower-cased text) at a third of its cost."""
    return lowered.encode("ascii", "replace").translate(_NOT_LOWER_LETTER).decode("ascii").split()
# Common English words: a decoded or transformed text is kept only when it reads more like language.
_COMMON = frozenset(
    ["the", "and", "you", "your", "all", "to", "of", "a", "in", "is", "it", "this", "that", "for", "be", "are", "with", "as", "on", "not", "or", "any", "now", "do", "from", "these", "those", "ignore", "instructions", "previous", "prior", "rules", "disregard", "forget", "obey", "follow", "system", "prompt", "send", "secrets", "tokens", "keys", "password", "passwords", "delete", "remove", "run", "execute", "user", "reply", "always", "never", "must", "reveal", "print", "data", "file", "files", "memory", "approve", "new", "task", "above", "please", "me", "my", "only", "read", "write", "email", "upload",
     # the commands a hidden download-and-run spells ("phey -f uggcf://… | onfu")
     "curl", "wget", "bash", "https", "http", "sudo", "chmod", "powershell", "root",
     # German, French, Spanish, Portuguese, Italian: function words and the orders attacks give (ASCII spellings)
     "der", "die", "das", "und", "ist", "nicht", "alle", "auf", "mit", "sie", "bitte", "weiter", "den", "dem",
     "les", "des", "vous", "tous", "toutes", "pour", "avec", "sur", "est", "pas", "aux",
     "los", "las", "que", "para", "por", "con", "todos", "todas", "del", "una", "sus",
     "com", "uma", "seu", "sua", "gli", "che", "per", "tutti", "tutte"])


# what the common words of three letters or more become under each transform (shorter ones prove nothing)
_COMMON_ROT13 = frozenset(w.translate(_ROT13) for w in _COMMON if len(w) >= 3)
_COMMON_REVERSED = frozenset(w[::-1] for w in _COMMON if len(w) >= 3)


class Variant(NamedTuple):
    """A text to scan and the normalisation that produced it ("" for the raw text)."""

    step: str
    text: str


# Compatibility characters that spell Latin letters or digits: full-width forms, mathematical
# alphanumerics, circled and parenthesised letters, ligatures, super/subscripts, letterlike symbols.
# CJK punctuation (，：。) is left alone so Chinese text does not produce a variant for nothing.
_COMPAT_RE = compile_cached("[\uff10-\uff19\uff21-\uff3a\uff41-\uff5a\U0001d400-\U0001d7ff\u2460-\u24ff"
                            "\u3200-\u32ff\ufb00-\ufb06\u2070-\u209f\u1d2c-\u1d6a\u2100-\u214f\u00aa\u00b2\u00b3"
                            "\u00b9\u00ba\u00bc-\u00be\u2000-\u200a\u205f\u02b0-\u02b8\u1e9b\u017f]+")
_FULLWIDTH_GAP_RE = compile_cached("(?<=[\uff01-\uff5e])\u3000|\u3000(?=[\uff01-\uff5e])")


@lru_cache(maxsize=16)
def _holds(rx: re.Pattern[str], text: str) -> bool:
    """Whether ``rx`` occurs in ``text``: one scan asks it of the same text up to three times (the
    chain, the decoders' clean text, the invisible-character check)."""
    return rx.search(text) is not None


def nfkc(text: str) -> str:
    """NFKC for the characters that can spell Latin text (full-width, math, circled ...)."""
    if text.isascii() or not _holds(_COMPAT_RE, text):
        return text
    text = _FULLWIDTH_GAP_RE.sub(" ", text)
    return _COMPAT_RE.sub(lambda m: unicodedata.normalize("NFKC", m.group(0)), text)


def strip_invisible(text: str) -> str:
    return text if text.isascii() or not _holds(_INVISIBLE_RE, text) else _INVISIBLE_RE.sub("", text)


def fold_confusables(text: str) -> str:
    if text.isascii() or not _confusable_re().search(text):
        return text
    # Only fold words that mix scripts or are lookalike-only: a Russian sentence stays Russian.
    # Only words holding a non-ASCII character are visited (an all-ASCII word has nothing to fold);
    # a word is a maximal run of non-whitespace, as the regex \S+ would find it.
    out: list[str] = []
    last, n = 0, len(text)
    for m in _NON_ASCII_RUN_RE.finditer(text):
        start = m.start()
        if start < last:
            continue  # inside the word just folded
        while start > last and not text[start - 1].isspace():
            start -= 1
        end = m.end()
        while end < n and not text[end].isspace():
            end += 1
        out.append(text[last:start])
        out.append(_fold(text[start:end]))
        last = end
    out.append(text[last:])
    return "".join(out)


# non-ASCII characters that are not whitespace (str.isspace: U+0085, U+00A0, U+1680, U+2000-200A,
# U+2028, U+2029, U+202F, U+205F, U+3000)
_NON_ASCII_RUN_RE = compile_cached("[^\x00-\x7f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")


def _fold(word: str) -> str:
    if not _NON_ASCII_LETTER_RE.search(word):
        return word
    folded = word.translate(_CONFUSABLES)
    has_latin = any("a" <= c.lower() <= "z" for c in word)
    return folded if has_latin or folded.isascii() else word


def unleet(text: str) -> str:
    """Map leet digits and symbols back to letters. With three or more mixed words the whole text is
    treated as leetspeak ("th3", "4nd"); otherwise only unambiguous words are mapped."""
    spans = _leet_spans(text)
    if not spans:
        return text  # no leet character next to a letter: neither pattern can match
    words = [text[a:b] for a, b in spans]
    rx = _LEET_ANY_RE if sum(1 for w in words if _LEET_ANY_RE.fullmatch(w) and _leet_inside(w)) >= 3 else _LEET_TOKEN_RE
    out: list[str] = []
    last = 0
    for (a, b), w in zip(spans, words):
        if rx.fullmatch(w):  # as rx.sub would replace it: the patterns' look-arounds stop at the token's ends
            out += (text[last:a], w.translate(_LEET))
            last = b
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _leet_spans(text: str) -> list[tuple[int, int]]:
    """The tokens (maximal runs of word characters and leet symbols) holding a letter next to a leet
    character, in order: the only ones _LEET_ANY_RE and _LEET_TOKEN_RE can match."""
    spans: list[tuple[int, int]] = []
    n, end = len(text), -1
    for m in _LEET_PAIR_RE.finditer(text):
        start = m.start()
        if start < end:
            continue  # in the token just taken
        while start and ((c := text[start - 1]).isalnum() or c in _LEET_WORD):
            start -= 1
        end = m.end()
        while end < n and ((c := text[end]).isalnum() or c in _LEET_WORD):
            end += 1
        spans.append((start, end))
    return spans


def _leet_inside(word: str) -> bool:
    """A leet character before a letter: "th3m", "4ll", "pr3v"; a number after a name ("deploy137",
    "v1") is an identifier, not leetspeak."""
    return not word.rstrip("0123456789").isalpha()


def collapse_spacing(text: str) -> str:
    """Join letters spaced out one by one ("d i s r e g a r d"); once such a run exists, shorter
    runs ("a l l") are joined too."""
    if not _SPACED_HINT_RE.search(text) or not _SPACED_RE.search(text):
        return text
    # symbols spaced out with the letters ("r m   - r f   / h o m e / *") are joined first
    text = _SPACED_ANY_RE.sub(lambda m: m.group(0).replace(" ", ""), text)
    # the word gaps (2+ spaces) become single spaces: "from   now   on" reads as "from now on"
    return _WORD_GAP_RE.sub(" ", _SPACED_SHORT_RE.sub(lambda m: _join_spaced(m.group(0)), text))


def _join_spaced(run: str) -> str:
    """Letters joined; where they were joined by dots, dashes or stars, spaces stay word breaks
    ("F.o.r.g.e.t a.l.l" reads "Forget all", not "Forgetall")."""
    if any(c in run for c in ".-_*"):
        return _MARK_SPACER_RE.sub("", run)
    return run.replace(" ", "")


def rot13(text: str) -> str:
    return text.translate(_ROT13)  # what the "rot13" codec does, without importing it


def language_score(text: str) -> int:
    """How many common words (English and attack vocabulary, some German, French, Spanish,
    Portuguese and Italian) of three letters or more the text holds: shorter ones turn up by chance
    in transformed text ("no" reversed is "on"; rot13 turns "-n" into "-a")."""
    return sum(1 for w in _scored_words(text) if w in _COMMON)


def _scored_words(text: str) -> list[str]:
    """The words :func:`language_score` counts: lower-cased, three letters or more."""
    return [w for w in _lower_words(text.lower()) if len(w) >= 3]


def invisible_chars(text: str) -> list[tuple[int, str]]:
    """Suspicious invisible characters (position, char); a BOM at the start and ZWJ/ZWNJ inside
    non-Latin scripts or emoji sequences are legitimate and skipped."""
    if text.isascii() or not _holds(_INVISIBLE_RE, text):
        return []
    out = []
    for m in _INVISIBLE_RE.finditer(text):
        ch, i = m.group(0), m.start()
        if ch == "\ufeff" and i == 0:
            continue
        if ch in "\u200c\u200d\u00ad":
            prev = text[i - 1] if i else " "
            nxt = text[i + 1] if i + 1 < len(text) else " "
            if not (prev.isascii() and prev.isalpha()) or not (nxt.isascii() and nxt.isalpha()):
                continue
        out.append((i, ch))
    return out


def is_bidi(ch: str) -> bool:
    return ch in _BIDI


def decode_tags(text: str) -> list[str]:
    """ASCII smuggled in Unicode tag characters (U+E0020..E007E)."""
    if text.isascii() or not _holds(_INVISIBLE_RE, text):  # the tag characters are invisible ones
        return []
    return ["".join(chr(ord(c) - 0xE0000) for c in m.group(0)) for m in _TAG_RUN_RE.finditer(text)]


@lru_cache(maxsize=16)
def token_runs(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each maximal run of 16+ token characters (letters, digits, ``+/=_.:-``)."""
    return tuple(m.span() for m in _TOKEN_RUN_RE.finditer(text))


def decode_base64(text: str) -> list[str]:
    out: list[str] = []
    for m in (m for a, b in token_runs(text) for m in _B64_RE.finditer(text, a, b)):
        blob = m.group(0)
        if len(out) >= MAX_PAYLOADS:
            break
        if blob.isalpha() or blob.isdigit() or "/" in blob.strip("/") and blob.count("/") > len(blob) // 8:
            continue  # words, numbers, paths
        raw = blob[: MAX_PAYLOAD_CHARS * 2].rstrip("=")
        raw = raw[: len(raw) - 1] if len(raw) % 4 == 1 else raw  # one character past a full quantum carries no byte
        try:
            data = base64.b64decode(raw + "=" * (-len(raw) % 4), altchars=b"-_" if ("-" in raw or "_" in raw) else None, validate=True)
        except (binascii.Error, ValueError):
            continue
        decoded = _bytes_to_text(data)
        if decoded:
            out.append(decoded)
    return out


def decode_hex(text: str) -> list[str]:
    out: list[str] = []
    if "\\x" not in text and not _HEX_HINT_RE.search(text):
        return out
    for m in _HEX_RE.finditer(text):
        digits = re.sub(r"\\x|[ :]", "", m.group(0))[: MAX_PAYLOAD_CHARS * 2]
        try:
            data = bytes.fromhex(digits[: len(digits) - len(digits) % 2])
        except ValueError:
            continue
        decoded = _bytes_to_text(data)
        if decoded:
            out.append(decoded)
        if len(out) >= MAX_PAYLOADS:
            break
    return out


def decode_base32(text: str) -> list[str]:
    out: list[str] = []
    runs = token_runs(text)
    if not any(_B32_HINT_RE.search(text, a, b) for a, b in runs):
        return out
    for m in (m for a, b in runs for m in _B32_RE.finditer(text, a, b)):
        blob = m.group(0).rstrip("=")[: MAX_PAYLOAD_CHARS * 2]
        if blob.isalpha():
            continue  # an upper-case word or identifier, not base32 (which uses the digits 2-7)
        blob = blob[: len(blob) - len(blob) % 8]
        try:
            decoded = _bytes_to_text(base64.b32decode(blob))
        except (binascii.Error, ValueError):
            continue
        if decoded:
            out.append(decoded)
        if len(out) >= MAX_PAYLOADS:
            break
    return out


def decode_escapes(text: str) -> list[tuple[str, str]]:
    """Payloads written as escapes: (decoder step, text) for URL encoding, ``\\u``/HTML character
    references, 8-bit binary and character codes."""
    out: list[tuple[str, str]] = []
    if text.count("%") >= 4:  # only a run with four escapes is decoded
        from urllib.parse import unquote

        out += [("url-encoded", unquote(m.group(0).replace("+", " "))) for m in _URL_RE.finditer(text)
                if m.group(0).count("%") >= 4]
    if "\\u" in text or "&#" in text:
        for m in _ESCAPES_RE.finditer(text):
            run = _unescape(m.group(0))
            out.append(("escapes", re.sub(r"\\u([0-9a-fA-F]{4})", lambda u: chr(int(u.group(1), 16)), run)))
    if "0" in text and "1" in text and _BINARY_HINT_RE.search(text):
        for m in _BINARY_RE.finditer(text):
            bits = m.group(0).replace(" ", "")  # whole bytes, spaced or not
            out.append(("binary", _bytes_to_text(bytes(int(bits[i: i + 8], 2) for i in range(0, len(bits), 8)))))
    if "fromCharCode" in text or "chr(" in text:
        for m in _CHAR_CODES_RE.finditer(text):
            codes = re.findall(r"\d+", m.group(1) or m.group(0))
            out.append(("char-codes", "".join(chr(int(c)) for c in codes if int(c) < 0x110000)))
    return [(step, t[:MAX_PAYLOAD_CHARS]) for step, t in out[:MAX_PAYLOADS] if t and sum(c.isalpha() for c in t) >= 8]


def _unescape(escaped: str) -> str:
    """html.unescape, imported when a text holds such escapes (the module and its entity table: ~2 ms)."""
    import html

    return html.unescape(escaped)


def _bytes_to_text(data: bytes) -> str:
    if len(data) >= 8 and data[1::2].count(0) > len(data) // 4:  # UTF-16LE (PowerShell -EncodedCommand)
        try:
            s = data.decode("utf-16-le")
        except UnicodeDecodeError:
            return ""
    else:
        try:
            s = data.decode("utf-8")
        except UnicodeDecodeError:
            return ""
    printable = sum(1 for c in s if c.isprintable() or c in "\n\r\t")
    if not s or printable < len(s) * 0.9 or sum(c.isalpha() for c in s) < len(s) * 0.3:
        return ""
    return s[:MAX_PAYLOAD_CHARS]


# Text split across a markdown table or a list, a few words per cell or item ("| 1 | delete | | 2 | all
# loan agreements |", "- send - the payroll export - to - records@…"): the pieces joined read as one order.
_TABLE_RULE_RE = compile_cached(r":?-{2,}:?")
_ITEM_RE = compile_cached(r"(?:^|\s)[-•*]\s+")
_TABLE_HEADS = frozenset({"step", "steps", "action", "actions", "#", "no", "no.", "nr", "item", "task", "change",
                          "field", "value", "what", "row", "order", "part", "word"})
MIN_FRAGMENTS = 4
MAX_MEDIAN_WORDS = 2  # a list of real items says more per item


def _fragments_joined(pieces: list[str]) -> str | None:
    """``pieces`` joined by spaces when at least MIN_FRAGMENTS of them hold words and half hold at most
    MAX_MEDIAN_WORDS words each (so few words per piece that the order only reads once joined)."""
    pieces = [p for p in (p.strip() for p in pieces) if p and any(c.isalpha() for c in p)]
    if len(pieces) < MIN_FRAGMENTS:
        return None
    # a word per 12 characters at least (scripts written without spaces), and a word per 2 CJK characters
    sizes = sorted(max(len(p.split()), len(p) // 12) + (sum(c >= "\u3040" for c in p) // 2 if max(p) >= "\u3040" else 0)
                   for p in pieces)
    return " ".join(pieces) if sizes[(len(sizes) - 1) // 2] <= MAX_MEDIAN_WORDS else None


def join_fragments(text: str) -> list[str]:
    """The cells of a markdown table and the items of a list, joined, when each piece holds only a
    word or two (``joined``): a sentence split across rows so that no row reads as an order."""
    splits = []
    if text.count("|") >= 2 * MIN_FRAGMENTS:
        splits.append([c for c in text.split("|")
                       if not _TABLE_RULE_RE.fullmatch(c.strip()) and c.strip().lower() not in _TABLE_HEADS])
    if text.count("- ") + text.count("• ") + text.count("* ") >= MIN_FRAGMENTS:
        items = _ITEM_RE.split(text)[1:]  # what comes before the first item introduces the list
        if len(items) >= MIN_FRAGMENTS:
            splits.append(items)
    return [joined for pieces in splits if (joined := _fragments_joined(pieces)) is not None]


def hidden_html(text: str) -> list[str]:
    """Text a browser would not show: comments and hidden elements."""
    if "<" not in text:
        return []
    parts = [m.group(1) for m in _HTML_COMMENT_RE.finditer(text)]
    parts += [m.group(2) for m in _HTML_HIDDEN_RE.finditer(text)]
    return [_TAG_STRIP_RE.sub(" ", p).strip()[:MAX_PAYLOAD_CHARS] for p in parts[:MAX_PAYLOADS] if p.strip()]


def hidden_html_spans(text: str) -> list[tuple[int, int]]:
    """Where hidden HTML (comments, hidden elements) sits in ``text``: a match there is labelled
    ``html-hidden`` even though the raw text already shows it to the scanner."""
    if "<" not in text:
        return []
    spans = [m.span() for m in _HTML_COMMENT_RE.finditer(text)]
    spans += [m.span() for m in _HTML_HIDDEN_RE.finditer(text)]
    return spans


_CLEAN_STEPS = ("nfkc", "invisible", "confusables")
# The canonical chain's steps in order: the clean ones, then the fully normalised ones.
_CHAIN = (("nfkc", nfkc), ("invisible", strip_invisible), ("confusables", fold_confusables),
          ("leetspeak", unleet), ("spacing", collapse_spacing))
CHAIN_STEPS = tuple(step for step, _ in _CHAIN)


def canonical_chain(text: str) -> list[Variant]:
    """The cumulative chain; only outputs that differ from the previous step are returned."""
    return list(_chain(text))


@lru_cache(maxsize=16)
def _chain(text: str) -> tuple[Variant, ...]:
    """One scan asks for its text's chain several times (patterns, scoring, the revealing step)."""
    out: list[Variant] = []
    current = text
    for step, fn in _CHAIN:
        nxt = fn(current)
        if nxt != current:
            out.append(Variant(step, nxt))
            current = nxt
    return tuple(out)


def scan_variants(text: str) -> list[Variant]:
    """What to scan fully: the raw text, the cleaned text (NFKC, invisible characters removed,
    confusables folded) and the fully normalised text (plus leetspeak and spacing), each only if it
    differs from the ones before. The chain's other steps are tried only to name the step that
    revealed a finding (see ``canonical_chain``)."""
    chain = _chain(text)
    out = [Variant("", text)]
    cleaned = next((v.text for v in reversed(chain) if v.step in _CLEAN_STEPS), text)
    if cleaned != text:
        out.append(Variant("clean", cleaned))
    final = chain[-1].text if chain else text
    if final != cleaned:
        out.append(Variant("final", final))
    return out


@lru_cache(maxsize=16)
def clean(text: str) -> str:
    """NFKC and invisible characters removed: the base decoders work on (a scan asks for it several times)."""
    return strip_invisible(nfkc(text))


def decoded_payloads(text: str) -> list[Variant]:
    """Hidden payloads (tag characters, HTML, base64, hex, base32, escapes, rot13, reversed) of ``text``."""
    out: list[Variant] = [Variant("invisible", s) for s in decode_tags(text)] if not text.isascii() else []
    base = clean(text)
    out += [Variant("html-hidden", s) for s in hidden_html(base)]
    out += [Variant("base64", s) for s in decode_base64(base)]
    out += [Variant("hex", s) for s in decode_hex(base)]
    out += [Variant("base32", s) for s in decode_base32(base)]
    out += [Variant(step, s) for step, s in decode_escapes(base)]
    out += [Variant("joined", s) for s in join_fragments(base)]
    head = base[: MAX_PAYLOAD_CHARS * 4]
    if _LETTER_RE.search(base):
        segments: list[tuple[int, str, int]] | None = None
        head_lines = head.split("\n")
        words = _lower_words(head.lower())  # _scored_words without its 3-letter filter, applied below
        for step, fn, common in (("rot13", rot13, _COMMON_ROT13), ("reversed", _reverse, _COMMON_REVERSED)):
            # Words never span a segment boundary, so the segments' scores add up to the whole
            # text's: below 2 for the whole, no segment can read better. The transform of the whole
            # text scores what its words score once transformed (rot13 and reversal map words to words).
            if common.isdisjoint(words) or sum(map(common.__contains__, words)) < 2:
                continue
            if segments is None:
                segments = [(i, seg, language_score(seg)) for i, line in enumerate(head_lines)
                            for seg in _SEGMENT_RE.split(line)]
            # A line holding a segment that reads better is transformed whole: the separators
            # (":", ".", "/") survive both transforms, and a URL or a pipe spans segments.
            lines = sorted({i for i, seg, score in segments if _reads_better(fn(seg), score)})
            if lines:
                out.append(Variant(step, "\n".join(fn(head_lines[i]) for i in lines)))
    return out


_LETTER_RE = compile_cached(r"[A-Za-z]{4}")
_SEGMENT_RE = compile_cached(r"[\n:;.!?\"'`()]+")


def _reads_better(candidate: str, original_score: int) -> bool:
    """Keep a transform of a segment only when it reads clearly more like language than before:
    two different common words at least ("ton" read backwards twice is one word, "not")."""
    gained = len({w for w in _scored_words(candidate) if w in _COMMON})
    return gained >= 2 and gained >= original_score + 2


def _reverse(text: str) -> str:
    return text[::-1]
