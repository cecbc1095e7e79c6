"""Write latency on a 10,000-entry repository: memrepo in-process and as a CLI process,
beside `git add && git commit` of the same kind of file by the git CLI, in the same run.

Targets (issue 2): in-process write (checks + commit) >= 5x faster than the git CLI pair;
the CLI process, start to finish, under 150 ms. Prints figures; asserts nothing.

    python bench/bench_write.py [--entries 10000] [--runs 25]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def build_repo(path: Path, n: int) -> None:
    from memrepo.gitstore import Commit, format_message
    from memrepo.model.entry import Entry, serialise_entry
    from memrepo.repo import MemRepo
    from memrepo.verbs.init import init

    init(path)
    repo = MemRepo.open(path)
    policy = repo.policy()
    files = {}
    for i in range(n):
        e = Entry(id=f"k{i:06d}", text=f"Fact {i}: service s{i % 97} runs on host h{i % 13}.acme.io port {8000 + i % 50}",
                  scope="knowledge", updated="2026-01-01T00:00:00Z", tags=(f"svc{i % 97}",))
        files[policy.entry_path("knowledge", e.id)] = serialise_entry(e)
    for branch in ("verified", "provisional"):
        repo.store.transact(branch, lambda s: Commit(files, format_message("bulk load", "", [])))


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def bench_in_process(path: Path, runs: int) -> float:
    from memrepo.repo import MemRepo
    from memrepo.verbs.write import remember

    repo = MemRepo.open(path)
    remember(repo, "warm-up fact for the caches", scope="knowledge")
    samples = []
    for i in range(runs):
        t = time.perf_counter()
        remember(repo, f"In-process fact number {i} about deploys", scope="knowledge")
        samples.append(time.perf_counter() - t)
    return median_ms(samples)


def bench_cli(path: Path, runs: int) -> float:
    exe = shutil.which("memrepo") or ""
    cmd = [exe] if exe else [sys.executable, "-m", "memrepo"]
    samples = []
    for i in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd + ["-C", str(path), "remember", f"CLI fact number {i} about deploys", "--scope", "knowledge"],
                       check=True, capture_output=True)
        samples.append(time.perf_counter() - t)
    return median_ms(samples)


def bench_git_cli(path: Path, runs: int) -> float:
    clone = path.parent / "clone"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(["git", "clone", "-q", "-b", "provisional", str(path), str(clone)], check=True, env=env)
    for k, v in (("user.name", "Bench"), ("user.email", "bench@example.test")):
        subprocess.run(["git", "-C", str(clone), "config", k, v], check=True, env=env)
    src = next((clone / "memories" / "knowledge").rglob("*.md")).read_text()
    samples = []
    for i in range(runs):
        rel = f"memories/knowledge/zz/gitcli{i:03d}zz.md"
        target = clone / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(src.replace("k000000", f"gitcli{i:03d}zz"))
        t = time.perf_counter()
        subprocess.run(["git", "-C", str(clone), "add", rel], check=True, env=env)
        subprocess.run(["git", "-C", str(clone), "commit", "-q", "-m", f"add {rel}"], check=True, env=env)
        samples.append(time.perf_counter() - t)
    return median_ms(samples)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=25)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mem"
        t = time.perf_counter()
        build_repo(path, args.entries)
        print(f"built {args.entries:,} entries in {time.perf_counter() - t:.1f} s")
        git_ms = bench_git_cli(path, args.runs)
        inproc_ms = bench_in_process(path, args.runs)
        cli_ms = bench_cli(path, args.runs)
    print(f"{'operation':44} {'median ms':>10} {'vs git CLI':>11}")
    print(f"{'git add && git commit (git CLI, baseline)':44} {git_ms:10.1f} {'1.00x':>11}")
    print(f"{'memrepo remember, in-process (checks+commit)':44} {inproc_ms:10.1f} {git_ms / inproc_ms:10.1f}x")
    print(f"{'memrepo remember, CLI process':44} {cli_ms:10.1f} {git_ms / cli_ms:10.1f}x")
    print(f"targets: in-process >= 5x faster than git CLI ({'met' if git_ms / inproc_ms >= 5 else 'NOT met'}); "
          f"CLI < 150 ms ({'met' if cli_ms < 150 else 'NOT met'})")


if __name__ == "__main__":
    main()
