"""Exact and near-duplicate entries: normalised digests and word-shingle Jaccard. Pure: no git.

Near duplicates use shingles (3-word windows; character 3-grams for text without spaces, such
as Chinese) and their Jaccard similarity. Candidate pairs come from an inverted index of
shingles, so a scope of n entries is not compared n² times. Measured here: importing
``datasketch`` (MinHash) costs ~1.0 s, more than the whole write path, so memrepo uses this
small exact computation instead; it is exact where MinHash only estimates.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..findings import Finding
from ..model.entry import text_digest
from ..model.text import CJK_RE

NEAR_THRESHOLD = 0.7
SHINGLE_WORDS = 3
_WORD = re.compile(r"\w+", re.UNICODE)
_CJK = CJK_RE


@dataclass(frozen=True)
class Item:
    """An entry as the detector sees it."""

    id: str
    scope: str
    text: str
    path: str = ""


@dataclass(frozen=True)
class Pair:
    kind: str  # "exact" | "near"
    a: Item
    b: Item
    similarity: float


def threshold(policy_section: Mapping[str, object] | None) -> float:
    value = (policy_section or {}).get("near_threshold", NEAR_THRESHOLD)
    return float(value) if isinstance(value, (int, float)) else NEAR_THRESHOLD


def shingles(text: str, k: int = SHINGLE_WORDS) -> frozenset[str]:
    """Word k-shingles of the normalised text; CJK characters count as words (no spaces there)."""
    norm = unicodedata.normalize("NFKC", text).casefold()
    if norm.isascii():
        words = _WORD.findall(norm)
    else:
        words = []
        for w in _WORD.findall(norm):
            if _CJK.search(w):
                words.extend(w)  # one "word" per character
            else:
                words.append(w)
    if len(words) < k:
        return frozenset([" ".join(words)]) if words else frozenset()
    return frozenset(" ".join(words[i:i + k]) for i in range(len(words) - k + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


MAX_POSTING = 64  # a shingle shared by more entries than this is too common to propose candidates


def find_duplicates(items: Sequence[Item], near: float = NEAR_THRESHOLD, only: set[str] | None = None) -> list[Pair]:
    """Exact duplicates (same normalised text) and near duplicates (shingle Jaccard >= ``near``)
    within each scope. Each pair is reported once; ``a`` is the one listed first. With ``only``
    (paths), only pairs involving those entries are computed.

    Memory and time stay bounded on large or adversarial trees: candidates come from an inverted
    index whose postings stop growing at MAX_POSTING (a shingle that common says nothing), and no
    pair set is kept across entries.
    """
    out: list[Pair] = []
    by_digest: dict[tuple[str, str], Item] = {}
    exact_ids: set[str] = set()
    for it in items:
        key = (it.scope, text_digest(it.text))
        if key in by_digest:
            if only is None or it.path in only or by_digest[key].path in only:
                out.append(Pair("exact", by_digest[key], it, 1.0))
            exact_ids.add(it.id)
        else:
            by_digest[key] = it
    rest = [it for it in items if it.id not in exact_ids]
    sh = [shingles(it.text) for it in rest]
    indexes: dict[str, dict[str, list[int]]] = {}  # per scope: shingle -> entries holding it
    for j, it in enumerate(rest):
        index = indexes.setdefault(it.scope, {})
        for s in sh[j]:
            bucket = index.get(s)
            if bucket is None:
                index[s] = [j]
            elif len(bucket) <= MAX_POSTING:
                bucket.append(j)
    for j, it in enumerate(rest):
        if only is not None and it.path not in only:
            continue
        index = indexes[it.scope]
        candidates: set[int] = set()
        for s in sh[j]:
            bucket = index[s]
            if 1 < len(bucket) <= MAX_POSTING:  # a bucket of one holds only this entry
                candidates.update(bucket)
        for i in sorted(candidates):
            if i == j or (i > j and (only is None or rest[i].path in only)):
                continue  # each pair once: from its later member (or from the changed one)
            sim = jaccard(sh[i], sh[j])
            if sim >= near:
                a, b = (rest[i], it) if i < j else (it, rest[i])
                out.append(Pair("near", a, b, round(sim, 3)))
    return out


def near_matches(text: str, scope: str, others: Iterable[Item], near: float = NEAR_THRESHOLD,
                 skip: str = "") -> list[tuple[Item, float]]:
    """Entries of ``others`` in the same scope whose shingles are near ``text`` (best first)."""
    mine = shingles(text)
    found = []
    for other in others:
        if other.scope != scope or other.id == skip:
            continue
        sim = jaccard(mine, shingles(other.text))
        if sim >= near:
            found.append((other, round(sim, 3)))
    return sorted(found, key=lambda x: -x[1])


def duplicate_findings(items: Sequence[Item], near: float = NEAR_THRESHOLD,
                       only: set[str] | None = None) -> list[Finding]:
    """Warnings for `memrepo check`: duplicates are for a person (or `memrepo curate`) to merge."""
    out = []
    for pair in find_duplicates(items, near, only):
        if pair.kind == "exact":
            msg = f"same text as {pair.a.id} ({pair.a.scope})"
        else:
            msg = f"near duplicate of {pair.a.id} (similarity {pair.similarity:.2f})"
        out.append(Finding(f"duplicate.{pair.kind}", "warning", msg, path=pair.b.path,
                           hint="merge them: run `memrepo curate` to propose the merge for review", category="duplicate",
                           entry=pair.b.id, extra={"other": pair.a.id, "similarity": pair.similarity}))
    return out


def tree_duplicate_findings(entries: Iterable[tuple[str, str, str, str]], section: Mapping[str, object] | None,
                            only: Iterable[str] | None = None) -> list[Finding]:
    """``entries`` as (path, scope, id, text); called from policy.files.tree_findings."""
    items = [Item(eid, scope, text, path) for path, scope, eid, text in entries]
    return duplicate_findings(items, threshold(section), set(only) if only is not None else None)


def file_duplicate_findings(files: Mapping[str, object], policy: object, only: Iterable[str] | None = None) -> list[Finding]:
    """Duplicate warnings over the entry files of a tree (``{path: FileBlob}``), judged by ``policy``.

    Texts are read without parsing the fields (a whole-tree check would parse every entry a second
    time); a file that does not split into frontmatter and text is left out, its parse error is
    reported by the entry checks."""
    from ..errors import MemrepoError
    from ..gitstore import BLOB
    from ..model.entry import entry_body, path_scope_id

    entries = []
    for path, blob in sorted(files.items()):
        loc = path_scope_id(path)
        if loc is None or getattr(blob, "mode", None) != BLOB:
            continue
        try:
            entries.append((path, loc[0], loc[1], entry_body(blob.data, path)))  # type: ignore[attr-defined]
        except MemrepoError:
            continue
    section = policy.section("duplicates") if hasattr(policy, "section") else {}
    return tree_duplicate_findings(entries, section, only)
