"""Hybrid recall: BM25 (bm25s) fused with tag and entity matching, over English and CJK text.

A pure library: build a ``RecallIndex`` from entries, ``search`` it, ``update`` it after a
write, and keep indexes by git tree id in an ``IndexCache``. numpy and bm25s (the ``recall``
extra) are imported only when an index is built or loaded.
"""
from __future__ import annotations

from .cache import IndexCache
from .index import Hit, RecallIndex
from .tokens import tokenize

__all__ = ["Hit", "IndexCache", "RecallIndex", "tokenize"]
