"""The recall index: BM25 (bm25s) fused with tag and entity matching by reciprocal rank fusion.

Documents are stored in id order, so a tie always goes to the smaller id whatever order the
entries came in. An update tokenises only the added or changed entries, merges them into the
term columns (``Field.moved``, vectorised, no full sort) and recomputes the BM25 weights from
the stored term frequencies, so an updated index ranks exactly as a full rebuild does. BM25
weights depend on corpus statistics (document count, mean length, document frequencies), so
every weight moves when any document does; a delta segment scored with stale statistics would
drift from a rebuild. bench/bench_recall.py prints update and rebuild times side by side;
measured on a 2-CPU box: one write costs ~20 ms at 10,000 entries and ~150-200 ms at 100,000,
against 0.65 s and 7.6 s for a full rebuild (0.27 s and 2.6 s for bm25s' own index() even
when handed the already-tokenised corpus), so updates are incremental.
"""
from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..model.entry import Entry
from . import tokens as tk
from .field import Field, column_sums
from .fusion import ranked, rrf

if TYPE_CHECKING:
    import numpy as np

    Array = np.ndarray[Any, Any]

K1 = 1.5
B = 0.75
TAG_COVERAGE = 0.5


@dataclass(frozen=True)
class Hit:
    """One recall result. ``score`` is the fused score (higher is better)."""

    id: str
    scope: str
    score: float
    text: str
    tags: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "scope": self.scope, "score": self.score, "text": self.text, "tags": list(self.tags)}


@dataclass(frozen=True)
class Doc:
    """What the index keeps of an entry."""

    id: str
    scope: str
    text: str
    tags: tuple[str, ...]


def _rows(doc: Doc) -> tuple[Counter[str], Counter[str], Counter[str]]:
    words, ents = tk.analyse(doc.text)
    row = Counter(words)
    for tag in doc.tags:
        tag_words, tag_ents = tk.analyse(tag)
        row.update(tag_words)
        ents |= tag_ents
    tags = Counter({key: 1 for key in map(tk.tag_key, doc.tags) if key})
    return row, tags, Counter(dict.fromkeys(sorted(ents), 1))


def _unique_docs(entries: Iterable[Entry]) -> list[Doc]:
    """One document per id (a later entry with the same id replaces an earlier one), sorted by id."""
    by_id = {e.id: Doc(e.id, e.scope, e.text, tuple(e.tags)) for e in entries}
    return [by_id[i] for i in sorted(by_id)]


def bm25_values(field: Field, n_docs: int, k1: float = K1, b: float = B) -> Array:
    """Lucene-variant BM25 weight of every (term, document) element, as bm25s computes it."""
    import numpy as np

    lengths = np.bincount(field.docs, weights=field.weights, minlength=n_docs)
    avg = lengths.sum() / n_docs if n_docs else 1.0
    df = np.diff(field.indptr).astype(np.float64)
    idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
    tf = field.weights
    tfc = tf / (k1 * ((1 - b) + b * lengths[field.docs] / avg) + tf)
    return (idf[field.columns()] * tfc).astype(np.float32)


def _fields(docs: list[Doc]) -> tuple[Field, Field, Field]:
    rows = [_rows(d) for d in docs]
    return Field.build([r[0] for r in rows]), Field.build([r[1] for r in rows]), Field.build([r[2] for r in rows])


class RecallIndex:
    """A searchable snapshot of entries, named by ``key`` (e.g. the git tree id it was built from).

    ``RecallIndex(entries, key)`` builds; ``update(...)`` returns a new index and leaves this
    one usable. Instances are immutable and safe to share between threads for searching.
    """

    def __init__(self, entries: Iterable[Entry] = (), key: str = "") -> None:
        import numpy as np

        docs = _unique_docs(entries)
        codes = {scope: i for i, scope in enumerate(sorted({d.scope for d in docs}))}
        scopes = np.fromiter((codes[d.scope] for d in docs), np.int32, len(docs))
        self._set(key, docs, _fields(docs), codes, scopes)

    def _set(self, key: str, docs: list[Doc], fields: tuple[Field, Field, Field], codes: dict[str, int], scopes: Array) -> None:
        import bm25s

        self.key = key
        self._docs = docs
        self._ids = [d.id for d in docs]
        self._words, self._tags, self._ents = fields
        self._scope_codes, self._scopes = codes, scopes
        data, indices, indptr = self._words.csc(bm25_values(self._words, len(docs)))
        self._bm25 = bm25s.BM25(k1=K1, b=B, method="lucene")
        self._bm25.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": len(docs)}
        self._bm25.vocab_dict = self._words.vocab
        self._bm25.nonoccurrence_array = None
        self._bm25.unique_token_ids_set = set()  # only read by bm25s' retrieve(); we call get_scores_from_ids

    @classmethod
    def _from_parts(cls, key: str, docs: list[Doc], fields: tuple[Field, Field, Field], codes: dict[str, int], scopes: Array) -> RecallIndex:
        index = cls.__new__(cls)
        index._set(key, docs, fields, codes, scopes)
        return index

    def __len__(self) -> int:
        return len(self._docs)

    def _position(self, entry_id: str) -> int | None:
        pos = bisect.bisect_left(self._ids, entry_id)
        return pos if pos < len(self._ids) and self._ids[pos] == entry_id else None

    def __contains__(self, entry_id: object) -> bool:
        return isinstance(entry_id, str) and self._position(entry_id) is not None

    @property
    def docs(self) -> list[Doc]:
        """The indexed documents, in id order (not a ranking)."""
        return list(self._docs)

    def update(self, added_or_changed: Iterable[Entry], removed_ids: Iterable[str], new_key: str) -> RecallIndex:
        """A new index with entries added, replaced (same id) or removed; only those are tokenised.

        Ranks exactly as ``RecallIndex(all_entries, new_key)`` would. Unknown removed ids are ignored.
        """
        import numpy as np

        changed = _unique_docs(added_or_changed)
        gone = {*removed_ids, *(d.id for d in changed)}
        drop = [p for p in map(self._position, gone) if p is not None]
        keep = np.ones(len(self._docs), bool)
        keep[drop] = False
        survivors = [d for d in self._docs if d.id not in gone] if drop else self._docs
        surv_ids = [d.id for d in survivors]
        # new documents slot in by id; survivors shift right by the number inserted before them
        slots = np.asarray([bisect.bisect_left(surv_ids, d.id) for d in changed], np.int64)
        new_pos = slots + np.arange(len(changed))
        surv_pos = np.arange(len(survivors)) + np.searchsorted(slots, np.arange(len(survivors)), side="right")
        old_to_new = np.full(len(self._docs), -1, np.int64)
        old_to_new[keep] = surv_pos
        docs: list[Doc] = [None] * (len(survivors) + len(changed))  # type: ignore[list-item]
        for pos, doc in zip(surv_pos.tolist(), survivors):
            docs[pos] = doc
        for pos, doc in zip(new_pos.tolist(), changed):
            docs[pos] = doc
        codes = dict(self._scope_codes)
        scopes = np.empty(len(docs), np.int32)
        scopes[surv_pos] = self._scopes[keep]
        scopes[new_pos] = [codes.setdefault(d.scope, len(codes)) for d in changed]
        rows = [_rows(d) for d in changed]
        fields = tuple(f.moved(old_to_new, [r[i] for r in rows], new_pos) for i, f in enumerate((self._words, self._tags, self._ents)))
        return self._from_parts(new_key, docs, fields, codes, scopes)  # type: ignore[arg-type]

    def _bm25_scores(self, query: str, mask: Array | None) -> Array:
        import numpy as np

        ids = [self._words.vocab[t] for t in dict.fromkeys(tk.tokenize(query)) if t in self._words.vocab]
        if not ids:
            return np.zeros(len(self._docs), np.float32)
        return self._bm25.get_scores_from_ids(ids, weight_mask=mask)

    def _matches(self, field: Field, keys: Iterable[str], mask: Array | None) -> Array:
        cols = sorted({field.vocab[k] for k in keys if k in field.vocab})
        sums = column_sums(field.csc(), cols, len(self._docs))
        return sums if mask is None else sums * mask

    def _scope_mask(self, scopes: set[str]) -> Array:
        import numpy as np

        codes = [self._scope_codes[s] for s in scopes if s in self._scope_codes]
        return np.isin(self._scopes, codes).astype(np.float32)

    def rankings(self, query: str, scopes: set[str] | None = None) -> dict[str, Array]:
        """Each ranker's list of document positions, best first: ``bm25``, ``tags``, ``entities``.

        The tag list is empty unless tags spell out at least ``TAG_COVERAGE`` of the query: a
        question that merely mentions a tag word would otherwise lift every entry carrying that
        tag above the one whose text answers it (bench/bench_recall.py shows the effect).
        """
        import numpy as np

        mask = None if scopes is None else self._scope_mask(scopes)
        bm25 = self._bm25_scores(query, mask)
        tag_keys = {k for k in tk.query_tag_keys(query) if k in self._tags.vocab}
        empty = np.zeros(0, np.int64)
        tags = self._matches(self._tags, tag_keys, mask) if tk.tag_coverage(query, tag_keys) >= TAG_COVERAGE else None
        ents = self._matches(self._ents, tk.query_words(query), mask)
        return {
            "bm25": ranked(bm25, None),
            "tags": empty if tags is None else ranked(tags, bm25),
            "entities": ranked(ents, bm25),
        }

    def search(self, query: str, k: int = 5, scopes: set[str] | None = None) -> list[Hit]:
        """The ``k`` best entries for ``query``, optionally only from ``scopes``.

        Fuses the BM25, tag and entity rankings by reciprocal rank fusion; equal fused scores
        go to the smaller id, so results are deterministic. No match at all gives ``[]``.
        """
        if k <= 0 or not self._docs:
            return []
        fused = rrf(list(self.rankings(query, scopes).values()))
        best = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]  # position order is id order
        return [self._hit(pos, score) for pos, score in best]

    def search_bm25(self, query: str, k: int = 5, scopes: set[str] | None = None) -> list[Hit]:
        """BM25 alone (same tokeniser, raw BM25 scores), for comparison with ``search``."""
        if k <= 0 or not self._docs:
            return []
        mask = None if scopes is None else self._scope_mask(scopes)
        scores = self._bm25_scores(query, mask)
        return [self._hit(pos, float(scores[pos])) for pos in ranked(scores, None, k).tolist()]

    def _hit(self, pos: int, score: float) -> Hit:
        doc = self._docs[pos]
        return Hit(doc.id, doc.scope, round(score, 6), doc.text, doc.tags)
