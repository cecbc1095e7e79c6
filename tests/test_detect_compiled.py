"""The opt-in compiled scanner (pyproject.toml's mypyc hook: the hot modules of memrepo.detect
compiled to C) gives exactly the pure-Python scanner's findings: the wheel is really built with the
hook enabled, unpacked, and both scan the same corpora in fresh processes."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DETECT = ROOT / "tests" / "data" / "detect"
CORPORA = [DETECT / "corpus.jsonl", *(DETECT / f"heldout{n}.jsonl" for n in (3, 107, 157, 321, 322, 323, 324))]

# Scans every text of the corpora named on the command line; prints whether the scanner is compiled,
# then one JSON line of findings per text.
SCAN = r"""
import json, sys
from memrepo import detect
scanner = detect.default_scanner()
print(json.dumps(detect.compiled()))
for path in sys.argv[1:]:
    for line in open(path, encoding="utf-8"):
        if line.strip():
            found = scanner.scan_text(json.loads(line)["text"])
            print(json.dumps(sorted([f.rule, f.severity, f.normalisation, f.excerpt, f.line, f.category,
                                     json.dumps(f.extra, sort_keys=True, default=str)] for f in found)))
"""


def _scan(pythonpath: Path, cache: Path) -> tuple[bool, list[str]]:
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "MEMREPO_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-c", SCAN, *map(str, CORPORA)], env=env, capture_output=True,
                         text=True, check=True, timeout=600).stdout.splitlines()
    return json.loads(out[0]), out[1:]


@pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler: the compiled build cannot be made")
def test_compiled_scanner_matches_pure_python(tmp_path: Path) -> None:
    src = tmp_path / "project"  # a copy: the build hook briefly renames the project file it builds from
    shutil.copytree(ROOT / "src", src / "src", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    shutil.copytree(ROOT / "policies", src / "policies")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy2(ROOT / name, src / name)
    wheels = tmp_path / "wheels"
    env = {**os.environ, "HATCH_BUILD_HOOK_ENABLE_MYPYC": "true"}
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(src)],
                           env=env, capture_output=True, text=True, timeout=900, check=False)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = wheels.glob("memrepo-*.whl")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(site)
    assert list((site / "memrepo" / "detect").glob("scanner.*.so")), "the wheel holds no compiled scanner"

    was_compiled, compiled_found = _scan(site, tmp_path / "cache-compiled")
    pure, pure_found = _scan(ROOT / "src", tmp_path / "cache-pure")
    assert was_compiled and not pure
    assert len(pure_found) > 2000
    differ = [i for i, (a, b) in enumerate(zip(pure_found, compiled_found, strict=True)) if a != b]
    assert not differ, f"{len(differ)} texts differ, first: {pure_found[differ[0]]} vs {compiled_found[differ[0]]}"
