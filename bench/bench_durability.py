"""The cost of durable writes: median `remember` latency with fsync off (default) and on.

    /work/venv/bin/python bench/bench_durability.py [--writes 200] [--dir PATH]

Each setting runs in its own process (libgit2's fsync switch is process-wide), on a fresh bare
repository in --dir (default: a temp folder; put it on the disk you care about, not tmpfs).
fsync on is set the way a machine would set it: `git config memrepo.fsync true`. Prints
figures and asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = r"""
import json, sys, time
import pygit2
from memrepo.verbs.init import init
from memrepo.repo import MemRepo
from memrepo.verbs.write import remember
from memrepo.gitstore import fsync_enabled

path, writes, fsync = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "on"
init(path, bare=True)
if fsync:
    pygit2.Repository(path).config["memrepo.fsync"] = True
repo = MemRepo.open(path)
remember(repo, "warm-up write", scope="knowledge")
times = []
for i in range(writes):
    t = time.perf_counter()
    remember(repo, f"durability bench fact {i}", scope="knowledge")
    times.append((time.perf_counter() - t) * 1000)
print(json.dumps({"fsync": fsync_enabled(), "times": times}))
"""


def run(folder: Path, writes: int, setting: str) -> dict[str, object]:
    path = folder / f"repo-{setting}.git"
    out = subprocess.run([sys.executable, "-c", RUN, str(path), str(writes), setting], capture_output=True, text=True,
                         check=True)
    data = json.loads(out.stdout)
    times = sorted(data["times"])
    return {"setting": setting, "fsync_active": data["fsync"], "median_ms": statistics.median(times),
            "p90_ms": times[int(len(times) * 0.9)], "max_ms": times[-1]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--writes", type=int, default=200)
    ap.add_argument("--dir", type=Path, default=None, help="where to create the repositories (default: a temp dir)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        folder = Path(tmp)
        fs = subprocess.run(["df", "-T", str(folder)], capture_output=True, text=True, check=False).stdout.splitlines()[-1:]
        print(f"repositories in {folder} ({' '.join(fs[0].split()[:2]) if fs else 'unknown fs'}), {args.writes} writes each")
        rows = [run(folder, args.writes, "off"), run(folder, args.writes, "on")]
    for r in rows:
        print(f"fsync {r['setting']:>3} (active={r['fsync_active']}): median {r['median_ms']:.2f} ms, "
              f"p90 {r['p90_ms']:.2f} ms, max {r['max_ms']:.2f} ms")
    off, on = rows[0]["median_ms"], rows[1]["median_ms"]
    print(f"cost of fsync: +{on - off:.2f} ms per write at the median ({on / off:.1f}x)")  # type: ignore[operator]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
