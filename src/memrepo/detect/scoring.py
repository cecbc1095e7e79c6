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

import re
from bisect import bisect_right
from typing import NamedTuple

from .needles import NeedleIndex, TextIndex, text_index
from .rules import Feature

# A sentence ends at . ! ? followed by a space (not inside ".env" or "example.com"), at 。！？ or a newline.
_SENTENCE_RE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=[^\s.!?]))+[.!?。！？]*")
MAX_SENTENCES = 200
_QUOTED_RE = re.compile(r"(?<!\w)'[^'\n]{1,80}'(?!\w)|\"[^\"\n]{1,80}\"|‘[^’\n]{1,80}’|“[^”\n]{1,80}”|「[^」\n]{1,80}」|«[^»\n]{1,80}»|„[^“”\n]{1,80}[“”]")


class Scored(NamedTuple):
    score: float
    features: tuple[str, ...]
    sentence: str
    start: int


def split_sentences(text: str) -> list[tuple[int, str]]:
    return [(m.start(), m.group(0)) for m in _SENTENCE_RE.finditer(text) if m.group(0).strip()][:MAX_SENTENCES]


MIN_UNQUOTED = 12  # letters and digits left outside the quotes, below which nothing is blanked


def drop_quoted(text: str) -> str:
    """Text with short quoted spans blanked (same length): a memory that *mentions* a phrase in
    quotes ("our scanner flags 'ignore previous instructions'") is not giving that order. A text
    that is (nearly) all quotation is kept whole: quotes around an order do not make it a mention."""
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


def score_sentence(sentence: str, features: list[Feature], bonus: float = 0.0) -> tuple[float, tuple[str, ...]]:
    """The score of one sentence and the names of the features it shows (features match lower-cased text)."""
    s = drop_quoted(sentence.strip()).lower()
    total, names = bonus, []
    for feat in features:
        if feat.found_in(s):
            total += feat.weight
            names.append(feat.name)
    return total, tuple(names)


def _ceiling(features: list[Feature], index: TextIndex, bonus: float, needles: NeedleIndex | None, *,
             anchored_free: bool) -> float:
    """An upper bound of any sentence's score: the bonus plus the positive weights of the features
    whose required literals occur in the indexed text (anchored ones counted unchecked when
    ``anchored_free``, since they are matched on other strings)."""
    present = index.groups_of(needles) if needles is not None else frozenset()
    return bonus + sum(f.weight for f in features
                       if f.weight > 0 and (anchored_free and f.anchored or f.viable(index, present)))


def best_sentence(text: str, features: list[Feature], bonus: float = 0.0, *, needles: NeedleIndex | None = None,
                  floor: float | None = None) -> Scored | None:
    """The highest-scoring sentence of ``text`` (None for empty text).

    Each feature runs once over the whole text; its matches are assigned to sentences by position.
    Features anchored at the sentence start (``^``) are run per sentence instead. With ``floor``,
    None also when no sentence can reach it (proved from the features' required literals, without
    running their patterns): the scanner only needs sentences at its threshold."""
    sentences = split_sentences(text)
    if not sentences:
        return None
    if len(sentences) == 1:
        start, sentence = sentences[0]
        # the whole text's index bounds its one sentence's (a superset of its substrings) and is
        # usually the one the pattern pass already built
        if floor is not None and needles is not None and _ceiling(features, text_index(drop_quoted(text).lower()), bonus,
                                                                  needles, anchored_free=False) < floor:
            return None
        score, names = score_sentence(sentence, features, bonus)
        return Scored(score, names, sentence.strip(), start)
    lowered = drop_quoted(text).lower()
    index = text_index(lowered)
    if floor is not None and needles is not None and _ceiling(features, index, bonus, needles, anchored_free=True) < floor:
        return None
    starts = [s for s, _ in sentences]
    hits: list[set[str]] = [set() for _ in sentences]
    for feat in features:
        if feat.anchored:
            for i, (_, sentence) in enumerate(sentences):
                if feat.search_all(drop_quoted(sentence.strip()).lower()):
                    hits[i].add(feat.name)
            continue
        for m in feat.finditer(index):
            hits[bisect_right(starts, m.start()) - 1].add(feat.name)
    weights = {f.name: f.weight for f in features}
    order = [f.name for f in features]
    best: Scored | None = None
    for i, (start, sentence) in enumerate(sentences):
        score = bonus + sum(weights[n] for n in hits[i])
        if best is None or score > best.score:
            best = Scored(score, tuple(n for n in order if n in hits[i]), sentence.strip(), start)
    return best
