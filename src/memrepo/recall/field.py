"""A sparse documents-by-terms matrix stored term-major (CSC), updated without a full re-sort.

Each term owns a column ``docs[indptr[t]:indptr[t+1]]`` (a document at most once per column)
with parallel ``weights``. An update maps surviving document numbers to new ones, drops the
removed ones and merges the (few) new elements into their columns: all vectorised, O(nnz),
with no sort of the whole matrix. The vocabulary only grows; a term nobody uses any more has an
empty column and scores nothing.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Field:
    """Term weights per document: ``vocab`` term -> column, and the CSC arrays."""

    vocab: dict[str, int]
    indptr: Array   # int64, len(vocab) + 1
    docs: Array     # int32, document number of each element
    weights: Array  # float32, e.g. term frequency

    @classmethod
    def empty(cls) -> Field:
        import numpy as np

        return cls({}, np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float32))

    @classmethod
    def build(cls, rows: Sequence[Counter[str]]) -> Field:
        """The field of documents ``0..len(rows)-1``."""
        import numpy as np

        return cls.empty().moved(None, rows, np.arange(len(rows), dtype=np.int32))

    def columns(self) -> Array:
        """The column (term) of every element."""
        import numpy as np

        return np.repeat(np.arange(len(self.vocab), dtype=np.int32), np.diff(self.indptr))

    def moved(self, old_to_new: Array | None, rows: Sequence[Counter[str]], row_docs: Array) -> Field:
        """A new field: document ``d`` becomes ``old_to_new[d]`` (dropped when < 0), and ``rows[i]`` is added as ``row_docs[i]``."""
        import numpy as np

        col, docs, weights = self.columns(), self.docs, self.weights
        if old_to_new is not None:
            mapped = old_to_new[docs]
            kept = mapped >= 0
            col, docs, weights = col[kept], mapped[kept].astype(np.int32), weights[kept]
        vocab = dict(self.vocab) if rows else self.vocab
        new_col = [vocab.setdefault(term, len(vocab)) for row in rows for term in row]
        new_weights = [w for row in rows for w in row.values()]
        new_docs = np.repeat(np.asarray(row_docs, np.int32), [len(row) for row in rows]) if rows else np.zeros(0, np.int32)
        ncol = np.asarray(new_col, np.int32)
        order = np.argsort(ncol, kind="stable")
        ncol, new_docs, nweights = ncol[order], new_docs[order], np.asarray(new_weights, np.float32)[order]
        size = len(col) + len(ncol)
        old_at = np.arange(len(col)) + np.searchsorted(ncol, col, side="left")
        new_at = np.arange(len(ncol)) + np.searchsorted(col, ncol, side="right")
        out_docs = np.empty(size, np.int32)
        out_weights = np.empty(size, np.float32)
        out_docs[old_at], out_docs[new_at] = docs, new_docs
        out_weights[old_at], out_weights[new_at] = weights, nweights
        indptr = np.zeros(len(vocab) + 1, np.int64)
        np.cumsum(np.bincount(col, minlength=len(vocab)) + np.bincount(ncol, minlength=len(vocab)), out=indptr[1:])
        return Field(vocab, indptr, out_docs, out_weights)

    def check(self, n_docs: int) -> None:
        """ValueError unless the arrays form a valid matrix over ``n_docs`` documents (used on cache loads)."""
        import numpy as np

        ok = (
            len(self.indptr) == len(self.vocab) + 1 and self.indptr[0] == 0 and self.indptr[-1] == len(self.docs)
            and len(self.docs) == len(self.weights) and bool(np.all(np.diff(self.indptr) >= 0))
            and (len(self.docs) == 0 or (int(self.docs.min()) >= 0 and int(self.docs.max()) < n_docs))
        )
        if not ok:
            raise ValueError("inconsistent field arrays")

    def csc(self, values: Array | None = None) -> tuple[Array, Array, Array]:
        """``(data, indices, indptr)``; ``values`` (aligned with the elements) default to the weights."""
        return (self.weights if values is None else values), self.docs, self.indptr


def column_sums(csc: tuple[Array, Array, Array], columns: Sequence[int], n_docs: int) -> Array:
    """Per-document sum of the chosen columns (a query's terms) of a CSC matrix."""
    import numpy as np

    data, indices, indptr = csc
    out = np.zeros(n_docs, np.float32)
    for col in columns:
        start, end = indptr[col], indptr[col + 1]
        out[indices[start:end]] += data[start:end]  # a document occurs at most once per column
    return out
