"""The exact-duplicate digests a write leaves for the next process: a small delta over the file of
the tree it wrote on, read back through its chain, and never a wrong answer when a link is lost."""
from __future__ import annotations

import marshal
import random
from pathlib import Path

import pytest

from memrepo import Memory
from memrepo import repo as repomod
from memrepo.model.entry import text_digest
from memrepo.repo import MemRepo


def _truth(path: Path, scope: str = "memory") -> tuple[MemRepo, dict[str, str]]:
    """A new MemRepo (as a new process opens it) and the digests computed from the tree itself."""
    repo = MemRepo.open(path)
    snap = repo.store.branch_snapshot("provisional")
    return repo, {e.id: text_digest(e.entry.text) for e in repo.iter_entries(snap, scope) if e.entry is not None}


def _cached(path: Path, scope: str = "memory") -> dict[str, str]:
    repo = MemRepo.open(path)
    return repo.text_digests(repo.store.branch_snapshot("provisional"), scope)


def _files(path: Path) -> dict[str, object]:
    folder = Path(MemRepo.open(path).store.private_dir("cache"))
    return {p.name: marshal.loads(p.read_bytes()) for p in folder.glob("digests-*.marshal")}


def test_a_new_process_reads_what_each_write_changed(repo: Path) -> None:
    """Adds, replaces and removes in random order, some in one long-lived object and some each in
    a new one: the digests read back from the files always equal those of the tree."""
    rng = random.Random(7)
    mem = Memory.open(repo, agent="t")
    ids: list[str] = []
    for step in range(40):
        if step % 3 == 0:
            mem = Memory.open(repo, agent="t")  # a new process: nothing in memory
        action = rng.choice(["add", "add", "replace", "forget"]) if ids else "add"
        if action == "add":
            ids.append(mem.remember(f"Fact number {step}: the {rng.choice(['red', 'blue'])} rack holds {step} disks.")["id"])
        elif action == "replace":
            mem.replace(rng.choice(ids), f"Fact rewritten at step {step}.")
        else:
            mem.forget(ids.pop(rng.randrange(len(ids))))
        _, truth = _truth(repo)
        assert _cached(repo) == truth, step
    kinds = [type(v).__name__ for v in _files(repo).values()]
    assert "tuple" in kinds and "dict" in kinds  # deltas, and whole files where a chain was long enough


def test_a_delta_holds_only_what_changed_and_chains_stay_short(repo: Path) -> None:
    mem = Memory.open(repo, agent="t")
    for i in range(repomod._DELTA_CHAIN + 3):
        mem.remember(f"Rack {i} is in row {i * 7}.")
    repo_obj, truth = _truth(repo)
    key = repo_obj.scope_tree_id(repo_obj.store.branch_snapshot("provisional"), "memory")
    files = _files(repo)
    depth, data = 0, files[f"digests-{key}.marshal"]
    while isinstance(data, tuple):
        assert len(data[2]) == 1  # one entry added per write
        depth += 1
        data = files[f"digests-{data[1]}.marshal"]
    assert isinstance(data, dict) and 0 < depth <= repomod._DELTA_CHAIN


@pytest.mark.parametrize("damage", ["base removed", "delta cut short", "delta of another shape"])
def test_a_broken_chain_is_a_miss_and_is_rebuilt(repo: Path, damage: str) -> None:
    mem = Memory.open(repo, agent="t")
    for i in range(4):
        mem.remember(f"Shelf {i} holds the {i}th archive box.")
    repo_obj, truth = _truth(repo)
    key = repo_obj.scope_tree_id(repo_obj.store.branch_snapshot("provisional"), "memory")
    folder = Path(repo_obj.store.private_dir("cache"))
    top = folder / f"digests-{key}.marshal"
    data = marshal.loads(top.read_bytes())
    assert isinstance(data, tuple)
    if damage == "base removed":
        (folder / f"digests-{data[1]}.marshal").unlink()
    elif damage == "delta cut short":
        top.write_bytes(top.read_bytes()[:-5])
    else:
        top.write_bytes(marshal.dumps((data[0], data[1], ["not", "a", "dict"])))
    assert _cached(repo) == truth
    assert marshal.loads(top.read_bytes()) == truth  # rebuilt whole for the next process


def test_a_long_lived_process_keeps_few_scope_trees(repo: Path) -> None:
    mem = Memory.open(repo, agent="t")
    for i in range(12):
        mem.remember(f"Locker {i} belongs to the night shift.")
    assert 0 < len(mem.repo._digests) <= repomod._DIGESTS_KEPT



def test_the_newest_change_to_an_entry_wins_along_a_chain(repo: Path) -> None:
    """Read back through a chain, a later delta's value (or removal) of an id beats an earlier one's."""
    mem = MemRepo.open(repo)
    folder = Path(mem.store.private_dir("cache"))
    files = {"a": {"x": "1", "y": "1"}, "b": (repomod._DELTA, "a", {"x": "2", "z": "1"}),
             "c": (repomod._DELTA, "b", {"x": "3", "y": None}), "d": (repomod._DELTA, "c", {"x": None})}
    for key, data in files.items():
        (folder / f"digests-{key}.marshal").write_bytes(marshal.dumps(data))
    assert mem._load_digests("c") == {"x": "3", "z": "1"}
    assert mem._load_digests("d") == {"z": "1"}
    assert mem._load_digests("b") == {"x": "2", "y": "1", "z": "1"}
