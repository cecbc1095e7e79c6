"""Recall: tokenising, fused ranking, scopes, incremental updates and the on-disk cache."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from memrepo.model.entry import Entry
from memrepo.recall import Hit, IndexCache, RecallIndex, tokenize
from memrepo.recall.tokens import entities, query_tag_keys, tag_key

ENTRIES = [
    Entry("e-registry", "Docker images are pushed to registry.acme.io; the CI token lives in vault.", tags=("docker", "registry")),
    Entry("e-deploy", "Deploy the web app with flask-k8s-deploy to the staging cluster.", tags=("deploy", "k8s")),
    Entry("e-darkmode", "The user prefers dark mode in every editor.", scope="user", tags=("preferences",)),
    Entry("e-db", "The production database is PostgreSQL 15, backed up nightly at 03:00 UTC.", tags=("database", "backup")),
    Entry("z-deploy-cn", "我们用 Flask 部署到 k8s 集群，部署脚本是 flask-k8s-deploy。", scope="knowledge", tags=("部署",)),
    Entry("z-db-cn", "数据库使用 PostgreSQL 15，每天凌晨三点备份。", scope="knowledge", tags=("数据库", "备份")),
    Entry("z-lunch", "团队每周五中午一起吃饭，通常去楼下的川菜馆。", scope="knowledge", tags=("团队",)),
    Entry("j-tokyo", "東京オフィスの会議室は三階にあります。", scope="knowledge", tags=("オフィス",)),
    Entry("e-python", "Projects use Python 3.11 with ruff and mypy in CI.", tags=("python", "tooling")),
    Entry("e-oncall", "On-call rotation changes every Monday; pages go to the #ops-alerts channel.", tags=("oncall",)),
]


def ids(hits: list[Hit]) -> list[str]:
    return [h.id for h in hits]


@pytest.fixture(scope="module")
def index() -> RecallIndex:
    return RecallIndex(ENTRIES, key="tree-1")


def test_tokenize_english_identifiers_and_stems() -> None:
    toks = tokenize("Pushing images to registry.acme.io via flask-k8s-deploy")
    assert {"push", "registry", "acme", "io", "registry.acme.io", "flask", "k8s", "deploy", "flask-k8s-deploy"} <= set(toks)
    assert "to" not in toks
    assert tokenize("deployments") == tokenize("deployment")
    assert {"recall", "index", "recallindex"} <= set(tokenize("RecallIndex"))


def test_tokenize_cjk_unigrams_and_bigrams() -> None:
    toks = tokenize("部署到集群")
    assert {"部", "署", "集", "群", "部署", "署到", "集群"} <= set(toks)
    assert "部署到集群" not in toks  # not one token per sentence
    mixed = tokenize("用Flask部署到k8s")
    assert {"flask", "k8s", "部署"} <= set(mixed)
    assert {"東京", "会議"} <= set(tokenize("東京の会議室"))
    assert {"한국", "검색"} <= set(tokenize("한국어 검색"))
    assert tokenize("ＦＬＡＳＫ") == ["flask"]  # full-width Latin


def test_entities_and_tag_keys() -> None:
    assert {"registry.acme.io", "k8s", "jwt"} <= entities("Use JWT and k8s at registry.acme.io")
    assert tag_key("Docker-Registry") == tag_key("docker registries")
    assert "部署" in query_tag_keys("怎么部署到k8s")


def test_english_queries(index: RecallIndex) -> None:
    assert ids(index.search("where do we push docker images"))[0] == "e-registry"
    assert ids(index.search("which python version do projects use"))[0] == "e-python"
    assert ids(index.search("when is the database backed up"))[0] == "e-db"
    assert ids(index.search("dark mode"))[0] == "e-darkmode"


def test_chinese_queries(index: RecallIndex) -> None:
    assert ids(index.search("怎么部署"))[0] == "z-deploy-cn"
    assert ids(index.search("数据库什么时候备份"))[0] == "z-db-cn"
    assert ids(index.search("周五中午吃什么"))[0] == "z-lunch"
    assert ids(index.search("会議室は何階"))[0] == "j-tokyo"


def test_mixed_chinese_english(index: RecallIndex) -> None:
    top = ids(index.search("flask 部署 k8s", k=2))
    assert top[0] == "z-deploy-cn" and "e-deploy" in top
    assert ids(index.search("PostgreSQL 备份"))[0] == "z-db-cn"
    assert set(ids(index.search("flask-k8s-deploy", k=2))) == {"e-deploy", "z-deploy-cn"}


def test_tag_match_outranks_text_only_match() -> None:
    entries = [
        Entry("a", "notes about the weekly sync and the invoice template"),
        Entry("b", "the new starter checklist", tags=("onboarding",)),
        Entry("c", "onboarding onboarding is mentioned twice here but untagged"),
    ]
    ix = RecallIndex(entries, key="t")
    rankings = ix.rankings("onboarding")
    assert [ix.docs[p].id for p in rankings["tags"]] == ["b"]
    assert ids(ix.search("onboarding"))[0] == "b"


def test_scope_filter(index: RecallIndex) -> None:
    assert ids(index.search("flask 部署", scopes={"memory"})) == ["e-deploy"]
    assert all(h.scope == "knowledge" for h in index.search("flask deploy 数据库", k=10, scopes={"knowledge"}))
    assert index.search("dark mode", scopes={"nope"}) == []
    assert index.search("dark mode", scopes=set()) == []


def test_no_match_and_empty_index() -> None:
    assert RecallIndex([], key="empty").search("anything") == []
    assert RecallIndex(ENTRIES, key="t").search("xyzzy plugh") == []
    assert RecallIndex(ENTRIES, key="t").search("the", k=0) == []


def test_hit_json_shape(index: RecallIndex) -> None:
    hit = index.search("docker registry")[0]
    assert set(hit.to_json()) == {"id", "scope", "score", "text", "tags"}
    assert hit.score > 0 and hit.tags == ("docker", "registry")


def test_bm25_matches_bm25s_own_build() -> None:
    import bm25s
    import numpy as np

    ix = RecallIndex(ENTRIES, key="t")
    ref = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    corpus = [tokenize(d.text) + tokenize(" ".join(d.tags)) for d in ix.docs]
    ref.index(corpus, show_progress=False)
    for query in ("docker registry", "部署 k8s", "database backup 数据库"):
        ours = ix._bm25_scores(query, None)
        theirs = ref.get_scores(list(dict.fromkeys(t for t in tokenize(query) if t in ref.vocab_dict)))
        assert np.allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def _corpus(n: int, seed: int) -> list[Entry]:
    rng = random.Random(seed)
    words = ["deploy", "registry", "docker", "flask", "cluster", "backup", "database", "python", "token", "vault", "alert", "oncall", "editor"]
    cjk = ["部署", "集群", "数据库", "备份", "团队", "会议", "东京", "告警", "值班", "镜像"]
    tags = ["docker", "k8s", "数据库", "oncall", "python"]
    return [
        Entry(f"id{i:04d}", " ".join(rng.choice(words + cjk) for _ in range(rng.randint(3, 12))),
              scope=rng.choice(["memory", "user", "knowledge"]), tags=tuple(rng.sample(tags, rng.randint(0, 2))))
        for i in range(n)
    ]


QUERIES = ["docker registry", "部署 集群", "数据库备份", "python token", "oncall 告警", "vault", "k8s", "东京会议"]


def _results(ix: RecallIndex) -> list[list[tuple[str, float]]]:
    out = []
    for q in QUERIES:
        for scopes in (None, {"knowledge"}):
            out.append([(h.id, h.score) for h in ix.search(q, k=10, scopes=scopes)])
            out.append([(h.id, h.score) for h in ix.search_bm25(q, k=10, scopes=scopes)])
    return out


def test_incremental_update_equals_full_rebuild() -> None:
    base = _corpus(300, seed=1)
    ix = RecallIndex(base, key="k0")
    extra = _corpus(360, seed=2)[300:]
    changed = [e.with_(text=e.text + " 部署 flask-k8s-deploy", tags=e.tags + ("deploy",)) for e in base[10:40]]
    removed = [e.id for e in base[100:150]] + ["not-there"]
    updated = ix.update(changed + extra, removed, new_key="k1")
    final = {e.id: e for e in base}
    for r in removed:
        final.pop(r, None)
    final.update({e.id: e for e in changed + extra})
    rebuilt = RecallIndex(reversed(list(final.values())), key="k1")  # a different storage order on purpose
    assert updated.key == "k1" and len(updated) == len(rebuilt) == len(final)
    assert _results(updated) == _results(rebuilt)
    assert len(ix) == 300 and "id0100" in ix and "id0100" not in updated  # the old index is untouched
    # a chain of small updates lands in the same place
    chained = ix
    for i, e in enumerate(changed + extra):
        chained = chained.update([e], [], new_key=f"c{i}")
    chained = chained.update([], removed, new_key="k1")
    assert _results(chained) == _results(rebuilt)


def test_determinism_and_ties() -> None:
    twins = [Entry(f"t{i}", "identical text about flask", tags=("flask",)) for i in (3, 1, 2)]
    ix = RecallIndex(twins, key="t")
    assert ids(ix.search("flask", k=3)) == ["t1", "t2", "t3"]
    a = _results(RecallIndex(_corpus(200, 5), key="x"))
    b = _results(RecallIndex(list(reversed(_corpus(200, 5))), key="x"))
    assert a == b


def test_cache_roundtrip_and_lru(tmp_path: Path) -> None:
    cache = IndexCache(tmp_path / "recall", memory_items=1)
    ix = RecallIndex(ENTRIES, key="0123abcd")
    cache.put(ix)
    assert cache.get("0123abcd") is ix
    fresh = IndexCache(tmp_path / "recall")
    loaded = fresh.get("0123abcd")
    assert loaded is not None and loaded is not ix
    assert _results(loaded) == _results(ix)
    assert fresh.get("missing") is None
    cache.put(RecallIndex(ENTRIES[:2], key="other"))  # evicts 0123abcd from memory, both stay on disk
    assert cache.get("0123abcd") is not ix and cache.get("0123abcd") is not None
    assert not list((tmp_path / "recall").glob(".tmp-*"))


@pytest.mark.parametrize("garbage", [b"", b"not a zip at all", b"PK\x03\x04truncated"])
def test_corrupt_cache_file_is_rebuilt(tmp_path: Path, garbage: bytes) -> None:
    cache_dir = tmp_path / "recall"
    IndexCache(cache_dir).put(RecallIndex(ENTRIES, key="tree-9"))
    path = cache_dir / "tree-9.npz"
    path.write_bytes(garbage)
    cache = IndexCache(cache_dir)
    assert cache.get("tree-9") is None and not path.exists()
    built = cache.get_or_build("tree-9", lambda: ENTRIES)
    assert ids(built.search("docker registry"))[0] == "e-registry"
    assert IndexCache(cache_dir).get("tree-9") is not None


def test_cache_file_for_another_key_is_a_miss(tmp_path: Path) -> None:
    cache_dir = tmp_path / "recall"
    IndexCache(cache_dir).put(RecallIndex(ENTRIES, key="aaa"))
    (cache_dir / "aaa.npz").replace(cache_dir / "bbb.npz")
    assert IndexCache(cache_dir).get("bbb") is None


def test_unsafe_key_never_escapes_the_cache_dir(tmp_path: Path) -> None:
    cache_dir = tmp_path / "recall"
    cache = IndexCache(cache_dir)
    cache.put(RecallIndex(ENTRIES[:1], key="../../evil"))
    assert [p.parent for p in tmp_path.rglob("*.npz")] == [cache_dir]
    assert IndexCache(cache_dir).get("../../evil") is not None


def test_import_memrepo_recall_is_light() -> None:
    import subprocess
    import sys

    code = "import sys, memrepo.recall; print('numpy' in sys.modules, 'bm25s' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_tag_word_inside_a_question_does_not_outrank_the_answer() -> None:
    entries = [
        Entry("a", "The base image for services is python:3.11-slim.", tags=("docker",)),
        Entry("b", "Python services pin dependencies with uv lock files.", tags=("python",)),
    ]
    ix = RecallIndex(entries, key="t")
    assert ix.rankings("which base image do python services use")["tags"].size == 0
    assert ids(ix.search("which base image do python services use"))[0] == "a"
    assert ids(ix.search("python"))[0] == "b"  # a query that only names the tag uses it


def test_tokens_module_helpers() -> None:
    from memrepo.recall.tokens import tag_coverage

    assert tag_coverage("docker registry", {"docker", "registry"}) == 1.0
    assert tag_coverage("部署", {"部署"}) == 1.0
    assert tag_coverage("告警发到哪里", {"告警"}) < 0.5


@pytest.mark.parametrize("meta", [b"[1, 2]", b'{"format": 1, "key": "k", "docs": [[1]]}', b"\xff\xfe"])
def test_cache_file_with_bad_contents_is_a_miss(tmp_path: Path, meta: bytes) -> None:
    import numpy as np

    cache_dir = tmp_path / "recall"
    cache_dir.mkdir()
    np.savez(cache_dir / "k.npz", meta=np.frombuffer(meta, np.uint8))
    assert IndexCache(cache_dir).get("k") is None
    assert not (cache_dir / "k.npz").exists()
