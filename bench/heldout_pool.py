"""Pooled figures over held-out sets: detection / false alarms per set, pooled, English against the
other languages, by language and by category, with the scanner of this checkout; the pooled figure
of bench_scan.py's Hermes-style regex list beside it as the baseline.

Run: python bench/heldout_pool.py 121-128 [137-144 ...]   (numbers of tests/data/detect/heldoutNN.jsonl)
Prints figures; asserts nothing. The notes' pooled and by-language figures come from this script.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from bench_scan import hermes_blocks

DETECT = Path(__file__).resolve().parents[1] / "tests" / "data" / "detect"


def span(text: str) -> range:
    """``137`` or ``137-144``: the set numbers it names (argparse reports a bad one with this message)."""
    lo, _, hi = text.partition("-")
    if not lo.isdigit() or hi and not hi.isdigit() or hi and int(hi) < int(lo):
        raise argparse.ArgumentTypeError(f"{text!r} is not a set number or a range like 137-144")
    return range(int(lo), int(hi or lo) + 1)


def rate(blocked: int, total: int) -> str:
    return f"{100 * blocked / total:.1f}%" if total else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+", type=span, help="set numbers or ranges, e.g. 121-128 137")
    args = parser.parse_args()
    from memrepo.detect import default_scanner

    scanner = default_scanner()
    # (label, blocked) counts keyed by set, language group, language and category
    counts: dict[str, Counter[tuple[str, bool]]] = {}
    for n in (n for r in args.sets for n in r):
        path = DETECT / f"heldout{n}.jsonl"
        if not path.exists():
            parser.error(f"{path} does not exist; held-out sets are tests/data/detect/heldoutNN.jsonl")
        for at, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                record = None
            if not isinstance(record, dict) or not {"label", "text"} <= record.keys():
                parser.error(f"{path}:{at}: not a JSON object with 'label' and 'text'; fix or remove that line")
            blocked = any(f.blocking for f in scanner.scan_text(record["text"]))
            key = (record["label"], blocked)
            lang = record.get("lang", "?")
            keys = [f"set h{n}", "pooled", "group en" if lang == "en" else "group other", f"lang {lang}"]
            if record["label"] == "attack":
                keys.append(f"category {record.get('category', '?')}")
            for k in keys:
                counts.setdefault(k, Counter())[key] += 1
            counts.setdefault("baseline hermes-style", Counter())[record["label"], hermes_blocks(record["text"])] += 1
    order = ("set", "pooled", "baseline", "group", "lang", "category")
    for k in sorted(counts, key=lambda k: (order.index(k.split()[0]), len(k), k)):
        c = counts[k]
        attacks, benign = c["attack", True] + c["attack", False], c["benign", True] + c["benign", False]
        print(f"{k:24} detection {rate(c['attack', True], attacks):>6} ({c['attack', True]}/{attacks})"
              f"  false alarms {rate(c['benign', True], benign):>6} ({c['benign', True]}/{benign})")


if __name__ == "__main__":
    main()
