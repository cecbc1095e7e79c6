"""Each bad input gets one clear message (what, where, what next), exit 1 (2 for usage), no traceback,
and nothing already committed is lost or rewritten."""
from __future__ import annotations

import os
import time
from pathlib import Path

import pygit2
import pytest

from memrepo.errors import Conflict
from memrepo.gitstore import Commit, format_message
from memrepo.repo import MemRepo


def refs(path: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(path))
    return {name: str(repo.references[name].target) for name in repo.references if name.startswith("refs/heads/")}


def assert_clean_error(code: int, err: str, *needles: str, expect: int = 1) -> None:
    assert code == expect, err
    assert "Traceback" not in err and err.startswith("memrepo: ")
    for n in needles:
        assert n in err, (n, err)


def test_not_a_memory_repository(tmp_path, run):
    code, _, err = run("-C", tmp_path, "remember", "x")
    assert_clean_error(code, err, "not a git repository", "memrepo init")
    pygit2.init_repository(str(tmp_path / "plain"))
    code, _, err = run("-C", tmp_path / "plain", "review")
    assert_clean_error(code, err, "not a memory repository", "memrepo init")
    code, _, err = run("-C", tmp_path / "missing", "render")
    assert_clean_error(code, err, "no such directory")


def test_unknown_scope_and_origin(repo, run):
    before = refs(repo)
    code, _, err = run("-C", repo, "remember", "x", "--scope", "secrets")
    assert_clean_error(code, err, "unknown scope 'secrets'", "--scope", "memory, user", expect=2)
    code, _, err = run("-C", repo, "remember", "x", "--origin", "web")
    assert code == 2 and "invalid choice" in err
    assert refs(repo) == before


def test_empty_and_oversized_text(repo, run):
    before = refs(repo)
    code, _, err = run("-C", repo, "remember", "   ")
    assert_clean_error(code, err, "text is empty", expect=2)
    code, _, err = run("-C", repo, "remember", "z" * 70_000)
    assert_clean_error(code, err, "larger than 65,536 bytes", expect=2)
    code, _, err = run("-C", repo, "remember", "z" * 2_100, "--scope", "knowledge")
    assert_clean_error(code, err, "per-entry cap")
    assert refs(repo) == before


def test_ids_with_path_separators_or_dots(repo, run):
    before = refs(repo)
    for bad in ("../evil", "a/b", "a\\b", "..", ".hidden", "x" * 65):
        code, _, err = run("-C", repo, "remember", "fact", "--id", bad)
        assert_clean_error(code, err, "invalid entry id", expect=2)
        code, _, err = run("-C", repo, "show", bad)
        assert_clean_error(code, err, "invalid entry id", expect=2)
    assert refs(repo) == before


def test_fact_overwrite_by_explicit_id_asks_for_confirmation(repo, run):
    run("-C", repo, "remember", "Registry is r1.acme.io", "--id", "registry")
    code, _, err = run("-C", repo, "remember", "Registry is r2.acme.io", "--id", "registry")
    assert_clean_error(code, err, "already exists", "memrepo replace registry")


def _plant(repo: Path, path: str, data: bytes, branch: str = "provisional") -> None:
    store = MemRepo.open(repo).store
    store.transact(branch, lambda s: Commit({path: data}, format_message("plant", "", [])))


@pytest.mark.parametrize("data,needle", [
    (b"---\nid: [unclosed\n---\nbody\n", "YAML does not parse"),
    (b"no frontmatter at all\n", "missing YAML frontmatter"),
    (b"---\n- a\n- b\n---\nbody\n", "not a mapping"),
    (b"---\nid: p1\n---\n\xff\xfe bad bytes\n", "not valid UTF-8"),
    (b"---\nid: p1\nkind: fact\n---\nnul\x00byte\n", "NUL"),
    (b"---\na: &a [1,2]\nb: *a\n---\nx\n", "aliases are not allowed"),
])
def test_malformed_entry_files_are_findings_not_crashes(repo, run, data, needle):
    _plant(repo, "memories/memory/p1.md", data)
    code, out, err = run("-C", repo, "check", "--format", "json", json_out=True)
    assert code == 1 and "Traceback" not in err
    msgs = [f["message"] for f in out["findings"] if f["path"] == "memories/memory/p1.md"]
    assert any(needle in m for m in msgs), msgs
    code, rev, err = run("-C", repo, "review", "--format", "json", json_out=True)
    assert code == 0 and rev["entries"][0]["findings"]
    code, _, err = run("-C", repo, "promote", "p1", "--reviewer", "Lin <lin@acme.io>")
    assert_clean_error(code, err, "cannot promote")
    # other writes still work and the broken file is left as it was
    code, _, err = run("-C", repo, "remember", "Still works")
    assert code == 0, err


def test_id_disagreeing_with_file_name(repo, run):
    good = (b"---\nid: other\nkind: fact\ntype: memory\nsource_type: agent\nverification: pending\nttl: permanent\n"
            b"tags: []\nupdated: '2026-01-01'\nver: 1\norigin: agent_inferred\n---\nA fact\n")
    _plant(repo, "memories/memory/p2.md", good)
    code, out, _ = run("-C", repo, "check", "--format", "json", json_out=True)
    assert code == 1 and any(f["rule"] == "entry.id-mismatch" for f in out["findings"])


def test_branch_moved_under_us_retries_then_says_so(repo):
    store = MemRepo.open(repo).store
    calls = []

    def build(snap):
        calls.append(1)
        # another writer moves the branch after we read it, every time
        other = store.create_commit([snap.commit], snap.tree.id, "interloper\n")
        store.cas_ref("provisional", other, snap.commit, "interloper")
        return Commit({"memories/memory/x.md": b"x"}, format_message("mine", "", []))

    with pytest.raises(Conflict) as exc:
        store.transact("provisional", build, retries=5)
    assert "kept moving" in exc.value.what and exc.value.hint
    assert len(calls) == 5

    # a single race is retried transparently and nothing is lost
    moved = []

    def build_once(snap):
        if not moved:
            moved.append(1)
            other = store.create_commit([snap.commit], store.write_tree(snap.tree, {"memories/memory/theirs.md": b"t"}),
                                        "theirs\n")
            store.cas_ref("provisional", other, snap.commit, "theirs")
        return Commit({"memories/memory/mine.md": b"m"}, format_message("mine", "", []))

    store.transact("provisional", build_once)
    tree = store.branch_snapshot("provisional")
    assert tree.read("memories/memory/theirs.md") == b"t" and tree.read("memories/memory/mine.md") == b"m"


def test_stale_ref_lock_detected_explained_and_cleared(repo, run, monkeypatch):
    import memrepo.gitstore as gs

    lock = repo / ".git" / "refs" / "heads" / "provisional.lock"
    lock.write_text("0" * 40 + "\n")
    old = time.time() - 3600
    os.utime(lock, (old, old))
    before = refs(repo)
    monkeypatch.setattr(gs.time, "sleep", lambda s: None)  # don't wait out the retry budget in a test
    code, _, err = run("-C", repo, "remember", "blocked by lock")
    assert_clean_error(code, err, "provisional.lock", "memrepo doctor --fix")
    assert refs(repo) == before
    code, out, _ = run("-C", repo, "doctor", "--format", "json", json_out=True)
    assert code == 1 and out["locks"][0]["stale"] is True and out["locks"][0]["path"] == "refs/heads/provisional.lock"
    code, out, _ = run("-C", repo, "doctor")
    assert "memrepo doctor --fix" in out
    code, out, _ = run("-C", repo, "doctor", "--fix", "--format", "json", json_out=True)
    assert code == 0 and out["locks"][0]["removed"] is True and not lock.exists()
    code, _, err = run("-C", repo, "remember", "works again")
    assert code == 0, err


def test_fresh_lock_is_not_cleared(repo, run):
    lock = repo / ".git" / "refs" / "heads" / "verified.lock"
    lock.write_text("x")
    code, out, _ = run("-C", repo, "doctor", "--fix", "--format", "json", json_out=True)
    assert code == 1 and out["locks"][0]["stale"] is False and lock.exists()


def test_non_utf8_stdin_and_batch(repo, run, tmp_path, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"caf\xe9 \xff")))
    code, _, err = run("-C", repo, "remember", "-")
    assert_clean_error(code, err, "not valid UTF-8", "stdin")
    bad = tmp_path / "ops.json"
    bad.write_bytes(b"[{\"action\": \"add\", \"text\": \"\xff\"}]")
    code, _, err = run("-C", repo, "batch", bad)
    assert_clean_error(code, err, "cannot read", expect=2)
    bad.write_text("{not json")
    code, _, err = run("-C", repo, "batch", bad)
    assert_clean_error(code, err, "batch is not JSON", expect=2)


def test_checked_out_file_with_local_edits_is_not_overwritten(repo, run):
    _, a, _ = run("-C", repo, "remember", "Original", "--format", "json", json_out=True)
    run("-C", repo, "promote", a["id"], "--reviewer", "Lin <lin@acme.io>")
    path = repo / "memories" / "memory" / f"{a['id']}.md"
    path.write_text(path.read_text() + "local edit\n")
    run("-C", repo, "replace", a["id"], "Changed")
    code, _, err = run("-C", repo, "promote", a["id"], "--reviewer", "Lin <lin@acme.io>")
    assert_clean_error(code, err, "uncommitted change", str(path.relative_to(repo)))
    assert "local edit" in path.read_text()
