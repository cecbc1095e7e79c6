"""Scale: a memory repository of 100,000 entries and 1,000 skills; time and peak RSS per operation.

    /work/venv/bin/python bench/bench_scale.py [--entries 100000] [--skills 1000] [--pending 20] [--dir PATH]

The repository is built in one commit on verified (gitstore.write_tree, no working tree), plus
``--pending`` agent writes on provisional. Each operation runs in its own process so its peak
RSS (resource.getrusage) is its own. Prints figures; asserts nothing.

Targets set by other issues, printed beside the figures: in-process remember at least 5x faster
than `git add && git commit` (issue 2; see bench_write.py for the ratio), the CLI remember under
150 ms (issue 2), recall 60 ms median at 100,000 entries (issue 6). tests/test_scale.py runs a
reduced version (5,000 entries) that checks every operation works and memory stays bounded.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGETS_MS = {"remember (in-process)": None, "remember (CLI)": 150.0, "recall (CLI, warm)": None}

ENTRY = ("---\nid: {id}\nkind: fact\ntype: knowledge\nsource_type: agent\nverification: verified\nttl: permanent\n"
         "tags: [{tag}]\nupdated: '2026-01-{day:02d}T00:00:00Z'\nver: 1\norigin: verified_manual\n---\n{text}\n")
SKILL = ("---\nname: {name}\ndescription: How to handle task family {n} (build, test and release steps).\n---\n"
         "# {name}\n\n1. Check out the repository.\n2. Run the tests for family {n}.\n3. Publish the result.\n")
WORDS = ["deploy", "cluster", "staging", "backup", "database", "alert", "rotation", "token", "registry", "mirror", "cache", "queue", "region", "latency", "budget", "incident", "owner", "runbook", "schema", "migration", "index", "shard", "replica", "quota", "export", "import"]


def vocabulary(size: int) -> list[str]:
    """``size`` words: the 26 ops words first, then made-up ones (a small vocabulary is the near-duplicate
    index's worst case: every entry shares shingles with every other)."""
    import random

    rng = random.Random(7)
    extra = ["".join(rng.choice("aeioubdgklmnprstvz") for _ in range(rng.randint(4, 9))) for _ in range(max(0, size - len(WORDS)))]
    return (list(WORDS) + extra)[:max(size, 1)]


def build(path: Path, entries: int, skills: int, pending: int, vocab: int = 5000) -> dict[str, float]:
    """Write the repository; returns how long building took."""
    from memrepo.gitstore import Commit, format_message
    from memrepo.model.entry import entry_path
    from memrepo.repo import MemRepo
    from memrepo.verbs.init import init
    from memrepo.verbs.write import remember

    t0 = time.perf_counter()
    init(path, bare=True)
    repo = MemRepo.open(path)
    changes: dict[str, bytes] = {}
    import random

    rng, vocabulary_words = random.Random(11), vocabulary(vocab)
    for i in range(entries):
        eid = f"k{i:07d}"
        words = " ".join(rng.choice(vocabulary_words) for _ in range(6))
        text = f"Fact {i}: the {words} for service svc-{i % 997} is owned by team t{i % 53}."
        changes[entry_path("knowledge", eid, fanout=True)] = ENTRY.format(id=eid, tag=WORDS[i % len(WORDS)], day=1 + i % 28,
                                                                          text=text).encode()
    for n in range(skills):
        name = f"skill-{n:04d}"
        changes[f"skills/ops/{name}/SKILL.md"] = SKILL.format(name=name, n=n).encode()
    t1 = time.perf_counter()
    repo.store.transact("verified", lambda snap: Commit(changes, format_message(f"bench: {entries} entries", "", [])))
    from memrepo.verbs.promote import sync_provisional

    sync_provisional(repo)
    t2 = time.perf_counter()
    for i in range(pending):
        remember(repo, f"Pending fact {i}: the bench writer noted region r{i} latency", scope="knowledge")
    remember(repo, "The user prefers short answers", scope="user")
    return {"generate_s": t1 - t0, "commit_s": t2 - t1, "pending_s": time.perf_counter() - t2}


IN_PROCESS = r"""
import json, resource, statistics, sys, time
from memrepo.repo import MemRepo
from memrepo.verbs.write import remember
repo = MemRepo.open(sys.argv[1])
n = int(sys.argv[2])
t = time.perf_counter(); remember(repo, "warm-up write for the scale bench", scope="knowledge")
first = (time.perf_counter() - t) * 1000
times = []
for i in range(n):
    t = time.perf_counter()
    remember(repo, f"scale bench in-process write {i}", scope="knowledge")
    times.append((time.perf_counter() - t) * 1000)
print(json.dumps({"first_ms": first, "median_ms": statistics.median(times),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

MEASURE = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
limit = int(float(sys.argv[2]) * 2**20)

def cap_memory():  # a runaway operation fails with MemoryError instead of taking the machine down
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

try:
    p = subprocess.run(sys.argv[3:], capture_output=True, timeout=float(sys.argv[1]), preexec_fn=cap_memory)
    rc, err = p.returncode, p.stderr.decode("utf-8", "replace")[-400:]
except subprocess.TimeoutExpired:
    rc, err = -9, f"timed out after {sys.argv[1]} s"
ms = (time.perf_counter() - t) * 1000
print(json.dumps({"ms": ms, "rc": rc, "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, "err": err}))
"""


def measure(argv: list[str], timeout: float = 900.0, max_memory_mb: float = 6144) -> dict[str, Any]:
    """Run ``argv`` as its own process; wall time, exit code (-9: timed out) and its peak RSS.

    Its address space is capped at ``max_memory_mb``: past it the operation fails (MemoryError)."""
    out = subprocess.run([sys.executable, "-c", MEASURE, str(timeout), str(max_memory_mb), *argv], capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def cli(path: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "memrepo", "-C", str(path), *args]


def operations(path: Path, reps: int) -> list[tuple[str, list[str]]]:
    ops = [
        ("remember (CLI)", cli(path, "remember", "CLI scale bench write {n}", "--scope", "knowledge")),
        ("check --base verified provisional", cli(path, "check", "provisional", "--base", "verified", "--format", "json")),
        ("check (whole provisional tree)", cli(path, "check", "--format", "json")),
        ("review", cli(path, "review", "--format", "json")),
        ("render", cli(path, "render", "--format", "json")),
    ]
    try:
        import memrepo.recall  # noqa: F401

        ops += [("recall (CLI, cold)", cli(path, "recall", "who owns the staging database backup", "--format", "json")),
                ("recall (CLI, warm)", cli(path, "recall", "registry mirror latency for svc-42", "--format", "json"))]
    except ImportError:
        pass
    return ops


def run_ops(path: Path, reps: int, writes: int, timeout: float = 900.0, max_memory_mb: float = 6144) -> list[dict[str, Any]]:
    rows = []
    inproc = subprocess.run([sys.executable, "-c", IN_PROCESS, str(path), str(writes)], capture_output=True, text=True,
                            check=True)
    r = json.loads(inproc.stdout)
    rows.append({"op": "remember (in-process)", "median_ms": r["median_ms"], "first_ms": r["first_ms"], "rss_mb": r["rss_mb"],
                 "rc": 0})
    for name, argv in operations(path, reps):
        runs = []
        for n in range(1 if "cold" in name else reps):
            runs.append(measure([a.replace("{n}", str(n)) for a in argv], timeout, max_memory_mb))
            if runs[-1]["rc"] == -9:
                break
        rows.append({"op": name, "median_ms": statistics.median(x["ms"] for x in runs), "rss_mb": max(x["rss_mb"] for x in runs),
                     "rc": min(x["rc"] for x in runs) if any(x["rc"] < 0 for x in runs) else max(x["rc"] for x in runs),
                     "err": runs[-1]["err"] if any(x["rc"] > 1 or x["rc"] < 0 for x in runs) else ""})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=100_000)
    ap.add_argument("--skills", type=int, default=1_000)
    ap.add_argument("--pending", type=int, default=20)
    ap.add_argument("--reps", type=int, default=3, help="runs per CLI operation (median)")
    ap.add_argument("--writes", type=int, default=30, help="in-process writes timed")
    ap.add_argument("--vocab", type=int, default=5000, help="distinct words in the entry texts (26: worst case for duplicates)")
    ap.add_argument("--dir", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=900.0, help="seconds before an operation is stopped and reported")
    ap.add_argument("--max-memory-mb", type=float, default=6144, help="address-space cap per operation (MemoryError past it)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        path = Path(tmp) / "scale.git"
        built = build(path, args.entries, args.skills, args.pending, args.vocab)
        size = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 1e6
        print(f"{args.entries:,} entries ({args.vocab:,}-word vocabulary), {args.skills:,} skills, {args.pending} pending; built in "
              f"{built['generate_s']:.1f}s + commit {built['commit_s']:.1f}s + pending {built['pending_s']:.1f}s; "
              f"{size:.0f} MB on disk; {os.cpu_count()} CPUs")
        rows = run_ops(path, args.reps, args.writes, args.timeout, args.max_memory_mb)
    print(f"{'operation':38} {'median ms':>10} {'peak RSS MB':>12}  exit  target   (exit -9: stopped at --timeout)")
    for r in rows:
        target = TARGETS_MS.get(r["op"])
        tgt = f"< {target:.0f} ms" if target else ""
        extra = f" (first {r['first_ms']:.0f} ms)" if "first_ms" in r else ""
        print(f"{r['op']:38} {r['median_ms']:10.1f} {r['rss_mb']:12.0f}  {r['rc']:>4}  {tgt}{extra}")
        if r.get("err"):
            print(f"    stderr: {r['err'].strip()[-300:]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
