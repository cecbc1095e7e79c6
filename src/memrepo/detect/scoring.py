"""Scoring layer: directives to an AI that no pattern names.

Each sentence is scored by the features defined in ``policies/rules/scoring.yaml``:

* ``addressee``      second person or an AI addressed by name ("you", "assistant:", 你);
* ``imperative``     the sentence opens with an order ("ignore", "send", "请", "vergiss");
* ``control_target`` it is about instructions, rules, memory, approvals, permissions, credentials;
* ``override_intent`` words that cancel or bypass rules ("regardless", "without asking", 跳过);
* ``persistence``    meant to outlive the session ("from now on", "forever", 永久);
* ``authority_claim`` backing nobody can check ("the admin has approved", 已经授权);
* ``obligation``     absolute words ("must", "always", 必须);
* ``attributed_fact`` (negative) a fact attributed to the user or team ("user prefers ...");
* ``descriptive``    (negative) describes code or infrastructure ("is set by", "lives in").

A feature counts once per sentence, whatever its number of matches. Text that a decoder
revealed (hidden HTML, base64 ...) gets ``hidden_bonus``: someone went out of their way to hide it.
A sentence at or above the threshold is a finding; its ``extra`` lists the features and the score.
"""
from __future__ import annotations

from bisect import bisect_right
from functools import lru_cache
from typing import NamedTuple

from .needles import NeedleIndex, TextIndex, text_index
from .rules import Feature, live_branches, search_branches
from .rxcache import compile_cached

# A sentence ends at . ! ? followed by a space (not inside ".env" or "example.com"), at 。！？ or a newline.
# (The run of other characters is one repeat, ``[^…]+``: re loops over it in C instead of trying the
# alternation at each character, three times faster; the matches are the same.)
_SENTENCE_RE = compile_cached(r"(?:[^.!?。！？\n]+|[.!?](?=[^\s.!?]))+[.!?。！？]*")
MAX_SENTENCES = 200
# an apostrophe between letters ('email the user's files') does not close a single-quoted span
# The single quote's look-behind (no word character before it) is written after the quote, so that
# every alternative opens with a literal: re then only tries the positions of an opening quote.
_QUOTED_RE = compile_cached(r"'(?<!\w')(?:[^'\n]|(?<=\w)'(?=\w)){1,80}'(?!\w)|\"[^\"\n]{1,80}\"|‘[^’\n]{1,80}’|“[^”\n]{1,80}”|「[^」\n]{1,80}」|«[^»\n]{1,80}»|„[^“”\n]{1,80}[“”]")


class Scored(NamedTuple):
    score: float
    features: tuple[str, ...]
    sentence: str
    start: int


def split_sentences(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(0)) for m in _SENTENCE_RE.finditer(text) if m.group(0).strip()][:MAX_SENTENCES]


_OPENING_QUOTES = ("'", '"', "‘", "“", "「", "«", "„")  # each alternative of _QUOTED_RE opens with one
MIN_UNQUOTED = 12  # letters and digits left outside the quotes, below which nothing is blanked


def drop_quoted(text: str) -> str:
    """Text with short quoted spans blanked (same length): a memory that *mentions* a phrase in
    quotes ("our scanner flags 'ignore previous instructions'") is not giving that order. A text
    that is (nearly) all quotation is kept whole: quotes around an order do not make it a mention."""
    if not any(q in text for q in _OPENING_QUOTES):
        return text  # most texts: no quotation mark, nothing to search
    blanked = _QUOTED_RE.sub(lambda m: " " * len(m.group(0)), text)
    if blanked is text or blanked == text:
        return text
    left = MIN_UNQUOTED
    for c in blanked:
        if c.isalnum():
            left -= 1
            if not left:
                return blanked
    return text


@lru_cache(maxsize=16)
def unquoted_lower(text: str) -> str:
    """``drop_quoted(text).lower()``: the scoring layer and the classifier both read it, per scan."""
    return drop_quoted(text).lower()


def score_sentence(sentence: str, features: list[Feature], bonus: float = 0.0) -> tuple[float, tuple[str, ...]]:
    """The score of one sentence and the names of the features it shows (features match lower-cased text)."""
    s = drop_quoted(sentence.strip()).lower()
    total, names = bonus, []
    for feat in features:
        if feat.found_in(s):
            total += feat.weight
            names.append(feat.name)
    return total, tuple(names)


def _unanchored_matches(features: list[Feature], floor: float | None, index: TextIndex, whole: TextIndex, bonus: float,
                        needles: NeedleIndex | None) -> dict[str, list[int]] | None:
    """Where each unanchored feature matches the blanked text (``index``): match starts by feature
    name; None when no sentence can score ``floor`` (without one, never None).

    The bound: the bonus plus the positive weights of the features whose required literals occur
    in the text (anchored features, matched on each sentence, against ``whole``, the unblanked
    text). Then, heaviest first, each such unanchored feature is run over the text (a sentence
    shows only features the text shows) and its weight dropped when it does not match, until the
    bound falls below ``floor``; a feature that cannot match is never run."""
    runs = [f for f in features if not f.anchored]
    heaviest: list[Feature] = []
    bound = limit = 0.0
    if floor is not None and needles is not None:
        present = index.groups_of(needles)
        present_whole = present if whole is index else whole.groups_of(needles)
        viable = [f for f in features
                  if f.weight > 0 and (f.viable(whole, present_whole) if f.anchored else f.viable(index, present))]
        bound, limit = bonus + sum(f.weight for f in viable), floor
        if bound < limit:
            return None
        heaviest = sorted((f for f in viable if not f.anchored), key=lambda f: -f.weight)
        runs = [f for f in runs if f.weight <= 0]  # a positive feature that cannot match is never run
    found: dict[str, list[int]] = {}
    for f in heaviest:
        it = f.finditer(index)
        first = next(it, None)
        if first is None:
            bound -= f.weight
            if bound < limit:
                return None
            continue
        found[f.name] = [first.start(), *(m.start() for m in it)]
    for f in runs:
        found[f.name] = [m.start() for m in f.finditer(index)]
    return found


def best_sentence(text: str, features: list[Feature], bonus: float = 0.0, *, needles: NeedleIndex | None = None,
                  floor: float | None = None) -> Scored | None:
    """The highest-scoring sentence of ``text`` (None for empty text).

    Each feature runs once over the whole text; its matches are assigned to sentences by position.
    Features anchored at the sentence start (``^``) are run per sentence instead, only with their
    patterns whose required literals occur in the whole text. With ``floor``, None also when no
    sentence can reach it (proved by :func:`_unanchored_matches` before any sentence is scored): the
    scanner only needs sentences at its threshold."""
    lowered = unquoted_lower(text)
    index = text_index(lowered)
    # Sentences are blanked one by one (a sentence that is all quotation is kept whole even where
    # the text's blanking removed it), so anchored features are gated by the unblanked text: its
    # literals are a superset of every sentence's.
    whole = text_index(text.lower())
    found = _unanchored_matches(features, floor, index, whole, bonus, needles)
    if found is None:
        return None
    sentences = split_sentences(text)
    if not sentences:
        return None
    starts = [s for s, _ in sentences]
    hits: list[set[str]] = [set() for _ in sentences]
    weights = {f.name: f.weight for f in features}
    for name, at in found.items():
        for pos in at:
            hits[bisect_right(starts, pos) - 1].add(name)
    anchored = [(f, live) for f in features if f.anchored and (live := live_branches(f.branches, whole))]
    if anchored:
        # Anchored features run per sentence: only on sentences that could still reach the floor
        # with every one of them.
        reach = bonus + sum(f.weight for f, _ in anchored if f.weight > 0)
        todo = [i for i in range(len(sentences))
                if floor is None or reach + sum(weights[n] for n in hits[i]) >= floor]
        parts = {i: drop_quoted(sentences[i][1].strip()).lower() for i in todo}
        for feat, live in anchored:
            for i in todo:
                if feat.name not in hits[i] and search_branches(live, parts[i]):
                    hits[i].add(feat.name)
    order = [f.name for f in features]
    best: Scored | None = None
    for i, (start, sentence) in enumerate(sentences):
        score = bonus + sum(weights[n] for n in hits[i])
        if best is None or score > best.score:
            best = Scored(score, tuple(n for n in order if n in hits[i]), sentence.strip(), start)
    return best
