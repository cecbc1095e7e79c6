"""Near-duplicate detection stays bounded on large, repetitive (or adversarial) trees."""
from __future__ import annotations

import resource
import time

from memrepo.policy.duplicates import Item, find_duplicates


def test_common_shingles_do_not_explode(tmp_path):
    items = [Item(f"k{i}", "knowledge", f"fact number {i} about the build host and the deploy pipeline", f"p{i}")
             for i in range(6000)]
    items.append(Item("dup", "knowledge", "fact number 17 about the build host and the deploy pipeline!", "pdup"))
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.perf_counter()
    pairs = find_duplicates(items)
    elapsed = time.perf_counter() - t
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before) / 1024
    assert ("k17", "dup") in {(p.a.id, p.b.id) for p in pairs}  # the real duplicate (exact after normalising)
    assert grown_mb < 300 and elapsed < 60


def test_only_changed_entries_are_compared():
    items = [Item("a", "memory", "The registry is registry.acme.io for team images", "pa"),
             Item("b", "memory", "The registry is registry.acme.io for team images now", "pb"),
             Item("c", "memory", "Completely different content about lunch menus today", "pc"),
             Item("d", "memory", "Completely different content about lunch menus today!!", "pd")]
    every = {(p.a.id, p.b.id) for p in find_duplicates(items)}
    assert every == {("a", "b"), ("c", "d")}
    only = {(p.a.id, p.b.id) for p in find_duplicates(items, only={"pb"})}
    assert only == {("a", "b")}
