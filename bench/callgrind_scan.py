"""Instructions per 1 KB scan under callgrind: a machine-independent figure for scan-speed changes.

Run: python bench/callgrind_scan.py [--entries everyday|dense|fresh] [--python PATH]
Needs valgrind. Two processes build the scanner and scan bench_scan's 100 1 KB entries once; the
second scans them once more; (its instructions - the first's) / 100 is the figure. ``fresh``: 200
entries of held-out benign texts (heldout225-248, each text used once: bench_scan.fresh_entries);
both scan the first 100, the second then the other 100, which no scan has met: the case of a real
write, where the texts' words, word pairs and scan plans are new to the process (bench_scan's
entries repeat their corpus's texts, so their plans and words are mostly met before). No bytecode is
written and the hash seed is fixed, so the two processes differ only by that pass. --python: the
interpreter whose memrepo is measured (e.g. .venv-compiled/bin/python for the compiled build).
Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
SCAN = """
import sys
sys.path.insert(0, {bench!r})
import bench_scan as b
from memrepo.detect import default_scanner
try:
    from memrepo.detect import compiled
except ImportError:  # a memrepo from before the compiled build
    compiled = lambda: False
# as bench_scan.py: the dev corpus's benign texts (near-attacks), or every everyday memory entry
entries = {entries!r}
if entries == "fresh":
    fresh = b.fresh_entries(200, benign=True)
    texts, measured = fresh[:100], fresh[100:]
else:
    dense = entries == "dense" and b.DEV.exists()
    records = b.load(b.DEV) if dense else [{{**r, "label": "benign"}} for r in b.load(b.MEMORIES)]
    texts = measured = b.entries_1kb(records, 100)
scanner = default_scanner()
for t in texts:
    scanner.scan_text(t)
for _ in range({passes}):
    for t in measured:
        scanner.scan_text(t)
print("compiled" if compiled() else "pure Python", file=sys.stderr)
"""


def instructions(python: str, entries: str, passes: int) -> tuple[int, str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
    code = SCAN.format(bench=str(BENCH), entries=entries, passes=passes)
    out = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", python, "-c", code],
                         env=env, capture_output=True, text=True, check=False).stderr
    found = re.search(r"Collected : (\d+)", out)
    if found is None:
        raise SystemExit(f"callgrind printed no instruction count:\n{out[-2000:]}")
    build = "compiled" if re.search(r"^compiled$", out, re.MULTILINE) else "pure Python"
    return int(found.group(1)), build


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--entries", choices=("everyday", "dense", "fresh"), default="everyday")
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    first = subprocess.run([args.python, "-c", SCAN.format(bench=str(BENCH), entries=args.entries, passes=0)], check=False,
                           env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}, capture_output=True, text=True)  # fills the detect cache
    if first.returncode:
        raise SystemExit(f"{args.python} could not scan the entries:\n{first.stderr[-2000:]}")
    base, build = instructions(args.python, args.entries, 0)
    more, _ = instructions(args.python, args.entries, 1)
    print(f"{args.entries} 1 KB entries, {build} scanner ({args.python}): {(more - base) / 100 / 1e6:.2f} M instructions per entry")


if __name__ == "__main__":
    main()
