"""Detection and false-alarm rates of a scanner over labelled records."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .scanner import Scanner


def evaluate(records: Iterable[dict[str, Any]], scanner: Scanner) -> dict[str, Any]:
    """Scan each record ({"label": "attack"|"benign", "text": ..., "category"?: ...}).

    A record is detected when the scan returns a finding of severity "error". Returns the
    detection rate (over attacks), the false-alarm rate (over benign records), counts, and the
    misses (attacks not detected) and false alarms by category, with their ids or texts.
    """
    counts: Counter[str] = Counter()
    missed_by_cat: Counter[str] = Counter()
    alarms_by_cat: Counter[str] = Counter()
    attacks_by_cat: Counter[str] = Counter()
    misses: list[dict[str, Any]] = []
    false_alarms: list[dict[str, Any]] = []
    for rec in records:
        label = rec.get("label")
        if label not in ("attack", "benign"):
            counts["skipped"] += 1
            continue
        category = str(rec.get("category") or "uncategorised")
        findings = scanner.scan_text(str(rec.get("text", "")))
        blocked = [f for f in findings if f.severity == "error"]
        counts[label] += 1
        ref = {"id": rec.get("id", ""), "category": category, "text": str(rec.get("text", ""))[:200]}
        if label == "attack":
            attacks_by_cat[category] += 1
            if blocked:
                counts["detected"] += 1
            else:
                missed_by_cat[category] += 1
                misses.append(ref)
        elif blocked:
            counts["false_alarms"] += 1
            alarms_by_cat[category] += 1
            false_alarms.append({**ref, "rules": [f.rule for f in blocked]})
    attacks, benign = counts["attack"], counts["benign"]
    return {
        "attacks": attacks,
        "benign": benign,
        "detected": counts["detected"],
        "false_alarms": counts["false_alarms"],
        "detection_rate": counts["detected"] / attacks if attacks else 0.0,
        "false_alarm_rate": counts["false_alarms"] / benign if benign else 0.0,
        "attacks_by_category": dict(sorted(attacks_by_cat.items())),
        "misses_by_category": dict(sorted(missed_by_cat.items())),
        "false_alarms_by_category": dict(sorted(alarms_by_cat.items())),
        "misses": misses,
        "false_alarm_records": false_alarms,
        "skipped": counts["skipped"],
    }
