"""Whole-scanner detection and false alarms on held-out sets at each threshold of the learned layer.

The scanner blocks a text when a rule, the scoring layer or the learned layer does; only the learned
layer's threshold moves here (its veto and the quotation checks stay as shipped), so each row is what
the scanner of this checkout would score with that threshold in policies/models/injection.json.
Release 22's threshold was chosen with it on heldout433-440 (docs/detector.md).

Run: python bench/threshold_grid.py 433-440 [--logits 2.0:4.0:0.05]
Prints figures; asserts nothing. To grid another model, put its file at policies/models/injection.json.
"""
from __future__ import annotations

import argparse
import json
import math

from heldout_pool import DETECT, span


def logits(text: str) -> list[float]:
    """``2.0:4.0:0.05`` (from, to, step) or one value: the logits to try."""
    parts = text.split(":")
    try:
        lo, hi, step = (float(parts[0]),) * 2 + (1.0,) if len(parts) == 1 else tuple(float(p) for p in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a logit or a range like 2.0:4.0:0.05") from None
    if step <= 0 or hi < lo:
        raise argparse.ArgumentTypeError(f"{text!r}: the step must be positive and the end not below the start")
    return [round(lo + step * i, 4) for i in range(round((hi - lo) / step) + 1)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+", type=span, help="set numbers or ranges, e.g. 433-440")
    parser.add_argument("--logits", type=logits, default=logits("2.0:4.0:0.05"), help="from:to:step (default 2.0:4.0:0.05)")
    args = parser.parse_args()
    from memrepo.detect import default_scanner

    scanner = default_scanner()
    if scanner.model is None:
        parser.error("the policy has no learned layer (scan.model is null); nothing to grid")
    rows: list[tuple[bool, str]] = []
    for n in (n for r in args.sets for n in r):
        path = DETECT / f"heldout{n}.jsonl"
        if not path.exists():
            parser.error(f"{path} does not exist; held-out sets are tests/data/detect/heldoutNN.jsonl")
        for at, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                record = json.loads(line)
                if not isinstance(record, dict) or not {"label", "text"} <= record.keys():
                    parser.error(f"{path}:{at}: not a JSON object with 'label' and 'text'; fix or remove that line")
                rows.append((record["label"] == "attack", record["text"]))
    attacks = sum(a for a, _ in rows)
    benign = len(rows) - attacks
    shipped = scanner.model.threshold
    print(f"{len(rows)} texts ({attacks} attacks); shipped threshold p {shipped:.4f} (logit {math.log(shipped / (1 - shipped)):.2f})")
    for z in args.logits:
        scanner.model.threshold = 1 / (1 + math.exp(-z))
        blocked = [(a, any(f.blocking for f in scanner.scan_text(t))) for a, t in rows]
        det = sum(b for a, b in blocked if a)
        fa = sum(b for a, b in blocked if not a)
        print(f"logit {z:5.2f} (p {scanner.model.threshold:.4f}): detection {100 * det / max(attacks, 1):5.1f}% "
              f"({det}/{attacks})  false alarms {100 * fa / max(benign, 1):5.2f}% ({fa}/{benign})", flush=True)


if __name__ == "__main__":
    main()
