"""Gate benchmark: the pre-commit hook on a one-file change in a 10,000-entry repository, and a
full `memrepo check` of 10,000 entries and 200 skills, each beside a baseline in the same run.

    /work/venv/bin/python bench/bench_hooks.py [--entries 10000] [--skills 200] [--runs 5]

Prints figures and ratios, asserts nothing. Targets (issue 3): hook under 300 ms, full check
under 2 s on 2 cores. Baseline: check-jsonschema (schema validation only, no content scan)
on the same entries' frontmatter as YAML files.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BIN = Path(sys.executable).parent
WORDS = ["deploy", "cluster", "database", "backup", "team", "meeting", "alert", "rota", "image", "service", "config", "log", "monitor", "user", "permission", "test", "release", "version", "network", "storage", "cache", "queue"]


def env() -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    e.update(GIT_CONFIG_NOSYSTEM="1", PATH=f"{BIN}{os.pathsep}{e.get('PATH', '')}",
             GIT_AUTHOR_NAME="Bench", GIT_AUTHOR_EMAIL="bench@example.test",
             GIT_COMMITTER_NAME="Bench", GIT_COMMITTER_EMAIL="bench@example.test")
    return e


def entry(eid: str, i: int) -> str:
    rng = random.Random(i)
    vocab = [f"{w}{rng.randint(0, 999)}" for w in WORDS]
    text = "The " + " ".join(rng.sample(vocab, 10)) + f" fact number {i}."
    return (f"---\nid: {eid}\nkind: fact\ntype: note\nsource_type: user\nverification: verified\nttl: permanent\n"
            f"tags: [t{i % 50}]\nupdated: '2026-11-29'\nver: 1\norigin: verified_manual\n---\n{text}\n")


def skill(name: str, i: int) -> str:
    return (f"---\nname: {name}\ndescription: How to {WORDS[i % len(WORDS)]} the {WORDS[(i + 3) % len(WORDS)]} "
            f"safely (skill {i}).\nmetadata:\n  version: 1.0.0\n---\n# {name}\n\n1. Read the runbook.\n2. Run the checks.\n")


def build(root: Path, n_entries: int, n_skills: int) -> tuple[Path, str]:
    """A memory repository with the entries and skills committed on verified; returns (repo, one entry path)."""
    from memrepo.gitstore import BLOB, Commit, FileBlob, Store, format_message
    from memrepo.model.entry import entry_path
    from memrepo.verbs.init import init

    repo = root / "mem"
    init(repo, bare=True)
    files: dict[str, bytes | FileBlob | None] = {}
    for i in range(n_entries):
        eid = f"k{i:05d}x{i % 97:02d}"
        files[entry_path("knowledge", eid, fanout=True)] = FileBlob(BLOB, entry(eid, i).encode())
    for i in range(n_skills):
        name = f"skill-{i:03d}"
        files[f"skills/cat{i % 10}/{name}/SKILL.md"] = FileBlob(BLOB, skill(name, i).encode())
    Store.open(repo).transact("verified", lambda s: Commit(files, format_message("bench data", "", [])))
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", "-b", "verified", str(repo), str(clone)], check=True, env=env())
    subprocess.run(["git", "config", "memrepo.verified", "verified"], cwd=clone, check=True, env=env())
    one = sorted(p for p in files if p.startswith("memories/"))[n_entries // 2]
    return clone, one


SPREAD: dict[str, tuple[float, float]] = {}  # command -> (fastest, slowest) run


def timed(cmd: list[str], cwd: Path, runs: int) -> tuple[float, int]:
    """Median wall time in seconds over ``runs`` (after one warm-up), and the last exit code."""
    subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, check=False)
    times, code = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=cwd, env=env(), capture_output=True, check=False)
        times.append(time.perf_counter() - t0)
        code = proc.returncode
    SPREAD[" ".join(cmd)] = (min(times), max(times))
    return statistics.median(times), code


def frontmatter_yaml(clone: Path, out: Path, paths: list[str]) -> list[str]:
    out.mkdir(parents=True, exist_ok=True)
    names = []
    for rel in paths:
        text = (clone / rel).read_text("utf-8")
        name = rel.replace("/", "__")[:-3] + ".yaml"
        (out / name).write_text(text.split("---\n")[1], "utf-8")
        names.append(str(out / name))
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=10_000)
    ap.add_argument("--skills", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    memrepo = str(BIN / "memrepo")
    cjs = shutil.which("check-jsonschema", path=str(BIN)) or "check-jsonschema"
    schema = str(Path(__file__).resolve().parents[1] / "policies" / "schemas" / "memory.schema.json")
    with tempfile.TemporaryDirectory(prefix="memrepo-bench-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        clone, one = build(root, args.entries, args.skills)
        print(f"built {args.entries:,} entries + {args.skills} skills in {time.perf_counter() - t0:.1f} s "
              f"({os.cpu_count()} CPUs)")
        # the one-file change a commit would carry
        path = clone / one
        path.write_text(path.read_text("utf-8").replace("fact number", "changed fact number"), "utf-8")
        subprocess.run(["git", "add", one], cwd=clone, check=True, env=env())

        hook, code = timed([memrepo, "check", "--files", one], clone, args.runs)
        base, bcode = timed([cjs, "--schemafile", schema, *frontmatter_yaml(clone, root / "fm1", [one])], clone, args.runs)
        print(f"\npre-commit hook, one-file change ({args.entries:,}-entry repository)")
        print(f"  memrepo check --files          {hook * 1000:8.0f} ms  (exit {code}; target < 300 ms)")
        print(f"  check-jsonschema (schema only) {base * 1000:8.0f} ms  (exit {bcode})")
        print(f"  ratio memrepo / baseline       {hook / base:8.2f}")

        cfg = clone / ".pre-commit-config.yaml"
        cfg.write_text("repos:\n  - repo: local\n    hooks:\n      - id: memrepo-entries\n        name: memrepo entries\n"
                       "        entry: memrepo check --files\n        language: system\n        files: ^memories/.+\\.md$\n",
                       "utf-8")
        subprocess.run(["git", "add", ".pre-commit-config.yaml"], cwd=clone, check=True, env=env())
        pc = shutil.which("pre-commit", path=str(BIN)) or "pre-commit"
        env_home = {"PRE_COMMIT_HOME": str(root / "pc-home")}
        os.environ.update(env_home)
        whole, wcode = timed([pc, "run", "memrepo-entries"], clone, args.runs)
        print(f"  pre-commit run (staged file)   {whole * 1000:8.0f} ms  (exit {wcode}; the real hook, pre-commit included)")

        full, fcode = timed([memrepo, "check", "verified"], clone, args.runs)
        fastest, slowest = SPREAD[f"{memrepo} check verified"]
        all_entries = sorted(str(p.relative_to(clone)) for p in (clone / "memories").rglob("*.md") if p.name != "README.md")
        yamls = frontmatter_yaml(clone, root / "fmall", all_entries)
        bfull, bfcode = timed([cjs, "--schemafile", schema, *yamls], clone, max(1, args.runs // 2))
        print(f"\nfull check: {len(all_entries):,} entries + {args.skills} skills")
        print(f"  memrepo check verified         {full:8.2f} s   (exit {fcode}; target < 2 s on 2 cores; "
              f"{args.runs} runs {fastest:.2f}-{slowest:.2f} s)")
        print(f"  check-jsonschema (schema only) {bfull:8.2f} s   (exit {bfcode})")
        print(f"  ratio memrepo / baseline       {full / bfull:8.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
