"""Recall benchmark: latency and build/update time on synthetic entries, quality on a labelled set.

    /work/venv/bin/python bench/bench_recall.py [--sizes 10000,100000] [--queries 200]

Prints figures and asserts nothing. Targets (issue 6): median search latency 10 ms at 10,000
entries and 60 ms at 100,000.
"""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from memrepo.model.entry import Entry
from memrepo.recall import RecallIndex, tokenize

HERE = Path(__file__).resolve().parent
CJK = "部署集群数据库备份团队会议东京告警值班镜像服务配置日志监控用户权限测试发布版本网络存储缓存队列"


def synthetic(n: int, seed: int = 7) -> list[Entry]:
    """``n`` entries: Zipf-distributed English-like words, some CJK phrases, identifiers and tags."""
    rng = random.Random(seed)
    vocab = [f"w{i}" + "".join(rng.choice("aeioustrnlk") for _ in range(rng.randint(2, 6))) for i in range(20_000)]
    weights = [1.0 / (r + 1) for r in range(len(vocab))]
    tags = [f"tag{i}" for i in range(500)]
    out = []
    for i in range(n):
        words = rng.choices(vocab, weights, k=rng.randint(8, 30))
        if rng.random() < 0.3:
            words.append("".join(rng.choice(CJK) for _ in range(rng.randint(4, 12))))
        if rng.random() < 0.2:
            words.append(f"svc-{rng.randint(0, 999)}.acme.io")
        out.append(Entry(f"s{i:07d}", " ".join(words), scope=rng.choice(("memory", "user", "knowledge")),
                         tags=tuple(rng.sample(tags, rng.randint(0, 3)))))
    return out


def queries(entries: list[Entry], count: int, seed: int = 11) -> list[str]:
    """Queries made of 2-5 words taken from random entries (so most have matches)."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        words = rng.choice(entries).text.split()
        out.append(" ".join(rng.sample(words, min(len(words), rng.randint(2, 5)))))
    return out


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def latency_ms(search: Callable[[str], object], qs: list[str]) -> tuple[float, float]:
    times = []
    for q in qs:
        start = time.perf_counter()
        search(q)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


def bench_size(n: int, nq: int) -> None:
    import bm25s

    entries = synthetic(n)
    build_s, index = timed(lambda: RecallIndex(entries, key="t0"))
    assert isinstance(index, RecallIndex)
    tokens = [tokenize(e.text) + tokenize(" ".join(e.tags)) for e in entries]
    ref = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    bm25s_s, _ = timed(lambda: ref.index(tokens, show_progress=False))
    changed = [entries[5].with_(text=entries[5].text + " 部署 flask-k8s-deploy")]
    update_s, updated = timed(lambda: index.update(changed + [Entry("new-1", "a brand new fact 新的事实")], ["s0000009"], "t1"))
    assert isinstance(updated, RecallIndex)
    qs = queries(entries, nq)
    index.search(qs[0])  # warm up
    med, p95 = latency_ms(lambda q: index.search(q, k=5), qs)
    med_scoped, _ = latency_ms(lambda q: index.search(q, k=5, scopes={"knowledge"}), qs)
    med_bm25, _ = latency_ms(lambda q: index.search_bm25(q, k=5), qs)
    print(f"n={n:>7,}  build {build_s:6.2f} s (tokenise + matrices)   bm25s.index from the same tokens {bm25s_s:6.2f} s")
    print(f"           update (1 changed, 1 added, 1 removed) {update_s * 1000:7.1f} ms   vs full rebuild {build_s * 1000:7.0f} ms")
    print(f"           search median {med:6.2f} ms  p95 {p95:6.2f} ms   scoped median {med_scoped:6.2f} ms   bm25 only median {med_bm25:6.2f} ms  ({nq} queries)")


def load_jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def recall_at(ranked_ids: list[list[str]], answers: list[str], k: int) -> float:
    return sum(a in r[:k] for r, a in zip(ranked_ids, answers)) / len(answers)


def bench_quality() -> None:
    import bm25s

    rows = load_jsonl(HERE / "recall_entries.jsonl")
    labelled = load_jsonl(HERE / "recall_labelled.jsonl")
    entries = [Entry(str(r["id"]), str(r["text"]), scope=str(r.get("scope", "memory")), tags=tuple(r.get("tags", ())))  # type: ignore[arg-type]
               for r in rows]
    index = RecallIndex(entries, key="labelled")
    qs = [str(q["query"]) for q in labelled]
    answers = [str(q["answer"]) for q in labelled]
    plain = bm25s.BM25()
    plain.index(bm25s.tokenize([e.text for e in entries], stopwords="en", show_progress=False), show_progress=False)

    def plain_search(q: str) -> list[str]:
        tokens = bm25s.tokenize([q], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        docs, scores = plain.retrieve(tokens, k=5, show_progress=False)
        return [entries[int(d)].id for d, s in zip(docs[0], scores[0]) if s > 0]

    systems = {
        "fused (bm25 + tags + entities, RRF)": lambda q: [h.id for h in index.search(q, k=5)],
        "bm25 only, memrepo tokeniser": lambda q: [h.id for h in index.search_bm25(q, k=5)],
        "plain bm25s (its tokeniser, en stopwords)": plain_search,
    }
    zh = [i for i, q in enumerate(labelled) if q.get("lang") == "zh"]
    print(f"labelled set: {len(entries)} entries, {len(qs)} queries ({len(zh)} Chinese or mixed)")
    for name, search in systems.items():
        ranked_ids = [search(q) for q in qs]
        zh_ranked = [ranked_ids[i] for i in zh]
        zh_answers = [answers[i] for i in zh]
        print(f"  {name:<44} recall@1 {recall_at(ranked_ids, answers, 1):.3f}  recall@5 {recall_at(ranked_ids, answers, 5):.3f}"
              f"   (zh: @1 {recall_at(zh_ranked, zh_answers, 1):.3f}  @5 {recall_at(zh_ranked, zh_answers, 5):.3f})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    bench_quality()
    for n in (int(s) for s in args.sizes.split(",") if s):
        bench_size(n, args.queries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
