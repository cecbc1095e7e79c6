"""A fresh process's first scan: what every CLI write, pre-commit run and server-hook run pays.

Each of N held-out 1 KB entries (bench_scan.fresh_entries, benign) is scanned by its own new
process, which builds the scanner from a warm detect cache and scans that one entry; CPU times of
both steps are printed as medians, with the regex code cache (rxcode-*.bin, see
src/memrepo/detect/rxcache.py) warm beside a baseline whose cache holds everything but that file
(every pattern the entry needs is compiled by ``re``). A third line scans with detect-secrets'
plugin patterns absent from the cache (the package is then imported, as before it was cached).

Run: python bench/bench_first_scan.py [--entries 20]. Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent
PROBE = """
import json, sys, time
sys.path.insert(0, {bench!r})
from bench_scan import fresh_entries
text = fresh_entries({n}, benign=True)[{i}]
t0 = time.thread_time()
from memrepo.detect import default_scanner
scanner = default_scanner()
t1 = time.thread_time()
scanner.scan_text(text)
t2 = time.thread_time()
print(json.dumps([(t1 - t0) * 1000, (t2 - t1) * 1000]))
"""


def first_scan(cache: Path, i: int, n: int) -> tuple[float, float]:
    env = {**os.environ, "MEMREPO_CACHE_DIR": str(cache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    out = subprocess.run([sys.executable, "-c", PROBE.format(bench=str(BENCH), i=i, n=n)], env=env,
                         capture_output=True, text=True, check=True)
    build, scan = json.loads(out.stdout)
    return build, scan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--entries", type=int, default=20)
    args = parser.parse_args()
    n = args.entries
    with tempfile.TemporaryDirectory() as tmp:
        warm = Path(tmp) / "warm"
        for i in range(n):  # fills the rule spec, the model table, the plugins' patterns and the regex code
            first_scan(warm, i, n)
        runs: dict[str, list[tuple[float, float]]] = {"regex code cached": [], "baseline: compiled by re": [],
                                                       "baseline, no plugin patterns either": []}
        for i in range(n):  # interleaved, so that the machine's drift hits every line alike
            runs["regex code cached"].append(first_scan(warm, i, n))
            for label, drop in (("baseline: compiled by re", ("rxcode-",)),
                                ("baseline, no plugin patterns either", ("rxcode-", "secret-plugins-"))):
                cold = Path(tmp) / "cold"
                shutil.rmtree(cold, ignore_errors=True)
                shutil.copytree(warm, cold, ignore=lambda _, names, d=drop: [x for x in names if x.startswith(d)])
                runs[label].append(first_scan(cold, i, n))
    print(f"a fresh process per held-out 1 KB entry ({n} entries), median CPU ms:")
    print(f"  {'':38} {'build scanner':>14} {'first scan':>11} {'scan vs cached':>15}")
    cached = statistics.median(s for _, s in runs["regex code cached"])
    for label, rows in runs.items():
        build, scan = statistics.median(b for b, _ in rows), statistics.median(s for _, s in rows)
        print(f"  {label:38} {build:14.1f} {scan:11.1f} {scan / cached:14.2f}x")


if __name__ == "__main__":
    main()
