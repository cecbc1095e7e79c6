"""Deterministic ranked lists and reciprocal rank fusion."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    Array = np.ndarray[Any, Any]

RRF_K = 60
DEPTH = 100


def ranked(primary: Array, tiebreak: Array | None, depth: int = DEPTH) -> Array:
    """Positions of the documents with ``primary > 0``, best first, at most ``depth``.

    Ties go to the higher ``tiebreak`` score, then to the smaller position (documents are stored in id order). Every document tied with
    the last one kept is sorted before cutting, so the order never depends on storage order.
    """
    import numpy as np

    cand = np.flatnonzero(primary > 0)
    if len(cand) > depth:
        cut = len(cand) - depth
        kth = np.partition(primary[cand], cut)[cut]
        cand = cand[primary[cand] >= kth]
    keys = [cand]
    if tiebreak is not None:
        keys.append(-tiebreak[cand])
    keys.append(-primary[cand])
    return cand[np.lexsort(keys)][:depth]


def rrf(rankings: Sequence[Array], weights: Sequence[float] | None = None, k: int = RRF_K) -> dict[int, float]:
    """Reciprocal rank fusion: ``sum(weight / (k + rank))`` per document, rank starting at 1."""
    fused: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[i]
        for rank, pos in enumerate(ranking.tolist(), start=1):
            fused[pos] = fused.get(pos, 0.0) + weight / (k + rank)
    return fused
