"""memrepo recall: every scope, Chinese and mixed text, an index keyed by tree id that is never stale."""
from __future__ import annotations

from pathlib import Path

import pytest

from memrepo.recall import RecallIndex
from memrepo.repo import MemRepo
from memrepo.verbs import recall as recall_mod
from memrepo.verbs.init import init
from memrepo.verbs.promote import promote
from memrepo.verbs.recall import memories_key, recall
from memrepo.verbs.write import Op, apply_ops, forget, remember, replace

ENTRIES = [
    ("memory", "Container images are pushed to registry.acme.io before kubectl apply", ("docker",)),
    ("memory", "生产环境的 Kubernetes 集群在东京, namespace 是 team-a", ("k8s",)),
    ("memory", "数据库每天凌晨三点自动备份到 S3 bucket acme-backups", ("db", "backup")),
    ("user", "用户叫林, 是一名 DBA, 喜欢简洁的回答", ()),
    ("user", "The user prefers pytest over unittest", ("python",)),
    ("knowledge", "告警值班表在 Confluence 的 oncall 页面, 每周一轮换", ("oncall",)),
    ("knowledge", "The staging 数据库 is pg-staging.acme.io, 端口 5433", ("db",)),
    ("knowledge", "发布版本号遵循 semver, 标签写成 v1.2.3", ("release",)),
]


def _seed(path: Path) -> MemRepo:
    init(path)
    repo = MemRepo.open(path)
    apply_ops(repo, [Op("add", scope=s, text=t, tags=tags) for s, t, tags in ENTRIES])
    recall_mod.forget_process_caches()
    return repo


@pytest.fixture
def mem(tmp_path: Path) -> MemRepo:
    """A repository of its own (for tests that write)."""
    return _seed(tmp_path / "mem")


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> MemRepo:
    """One repository for the read-only tests (seeding costs a policy load)."""
    return _seed(tmp_path_factory.mktemp("recall") / "mem")


def top(repo: MemRepo, query: str, **kw: object) -> str:
    hits = recall(repo, query, **kw).results  # type: ignore[arg-type]
    assert hits, query
    return str(hits[0]["text"])


@pytest.mark.parametrize("query, expected", [
    ("where are images pushed", "registry.acme.io"),
    ("Kubernetes 集群在哪", "东京"),
    ("备份到哪个 bucket", "acme-backups"),
    ("东京集群", "东京"),
    ("数据库备份", "凌晨三点"),
    ("DBA 林", "用户叫林"),
    ("值班", "oncall"),
    ("版本号 标签", "semver"),
    ("staging 数据库 端口", "pg-staging"),
    ("kubernetes namespace", "team-a"),
    ("pytest", "pytest over unittest"),
])
def test_chinese_and_mixed_queries_find_the_entry(shared: MemRepo, query: str, expected: str) -> None:
    assert expected in top(shared, query)


def test_results_shape_and_every_scope(shared: MemRepo, run) -> None:  # type: ignore[no-untyped-def]
    mem = shared
    code, out, err = run("-C", mem.path, "recall", "数据库", "-k", "8", "--format", "json", json_out=True)
    assert code == 0, err
    assert set(out) >= {"query", "branch", "results"} and out["branch"] == "provisional"
    for hit in out["results"]:
        assert set(hit) >= {"id", "scope", "score", "text", "pending"}
    assert {h["scope"] for h in out["results"]} >= {"memory", "knowledge"}  # recall-only scope included
    scores = [h["score"] for h in out["results"]]
    assert scores == sorted(scores, reverse=True)
    code, out, _ = run("-C", mem.path, "recall", "数据库", "--scope", "knowledge", "--format", "json", json_out=True)
    assert code == 0 and {h["scope"] for h in out["results"]} == {"knowledge"}


def test_never_stale_after_writes_and_incremental(mem: MemRepo) -> None:
    first = recall(mem, "registry")
    assert first.index["source"] == "build"
    added = remember(mem, "新的镜像仓库是 harbor.acme.cn, 旧的 registry 已停用", scope="knowledge")
    after = recall(mem, "harbor 镜像仓库")
    assert after.index["source"] == "update"  # derived from the previous tree by a diff, not rebuilt
    assert after.results[0]["id"] == added.results[0].id and after.results[0]["pending"] is True
    replace(mem, "harbor.acme.cn", "新的镜像仓库是 quay.acme.cn")
    assert "quay.acme.cn" in top(mem, "quay")
    assert all("harbor" not in h["text"] for h in recall(mem, "harbor").results)
    forget(mem, "quay.acme.cn")
    assert all("quay" not in h["text"] for h in recall(mem, "quay").results)
    # the incrementally maintained index ranks exactly like a fresh build of the same tree
    snap = mem.store.branch_snapshot("provisional")
    rebuilt = RecallIndex([e.entry for e in mem.iter_entries(snap) if e.entry], memories_key(snap))
    for query in ("数据库 备份", "registry", "用户", "acme.io"):
        got = [(h["id"], h["score"]) for h in recall(mem, query, k=8).results]
        assert got == [(h.id, h.score) for h in rebuilt.search(query, 8)]


def test_cache_is_reused_across_processes(mem: MemRepo) -> None:
    recall(mem, "registry")
    key = memories_key(mem.store.branch_snapshot("provisional"))
    assert (mem.store.git_dir / "memrepo" / "recall" / f"{key}.npz").is_file()
    recall_mod.forget_process_caches()  # as a new process would start
    again = recall(MemRepo.open(mem.path), "registry")
    assert again.index["source"] == "cache" and again.index["key"] == key
    recall_mod.forget_process_caches()
    remember(mem, "A fact written by another process", scope="knowledge")
    fresh = recall(MemRepo.open(mem.path), "another process")
    assert fresh.index["source"] == "update" and "another process" in fresh.results[0]["text"]


def test_verified_branch_and_pending_flag(mem: MemRepo) -> None:
    assert recall(mem, "registry", branch="verified").results == []  # nothing promoted yet
    hit = recall(mem, "registry").results[0]
    promote(mem, [str(hit["id"])], reviewer="Lin <lin@acme.io>")
    on_verified = recall(mem, "registry", branch="verified").results
    assert [h["id"] for h in on_verified] == [hit["id"]] and on_verified[0]["pending"] is False
    assert recall(mem, "registry").results[0]["pending"] is False


def test_usage_errors_are_reported_not_raised(shared: MemRepo, run) -> None:  # type: ignore[no-untyped-def]
    mem = shared
    for argv, words in ((("recall", "  "), "query is empty"), (("recall", "x", "-k", "0"), "k must be"),
                        (("recall", "x", "--scope", "nope"), "unknown scope"),
                        (("recall", "x", "--branch", "main"), "unknown branch")):
        code, _, err = run("-C", mem.path, *argv)
        assert code == 2 and words in err and "Traceback" not in err
