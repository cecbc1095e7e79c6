"""SARIF 2.1.0 for code scanning."""
from __future__ import annotations

from typing import Any, Sequence

from ..findings import Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def to_sarif(findings: Sequence[Finding]) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for f in findings:
        rules.setdefault(f.rule, {"id": f.rule, "name": f.rule.replace(".", "_"),
                                  "shortDescription": {"text": f.category or f.rule},
                                  "help": {"text": f.hint or f.message}})
        result: dict[str, Any] = {
            "ruleId": f.rule, "level": {"error": "error", "warning": "warning"}.get(f.severity, "note"),
            "message": {"text": f.message + (f" ({f.hint})" if f.hint else "")},
        }
        if f.path:
            region = {"startLine": max(1, f.line)} if f.line else None
            loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": f.path}}}
            if region:
                loc["physicalLocation"]["region"] = region
            result["locations"] = [loc]
        props = {k: v for k, v in (("category", f.category), ("normalisation", f.normalisation), ("excerpt", f.excerpt),
                                   ("entry", f.entry)) if v}
        if props:
            result["properties"] = props
        results.append(result)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "memrepo", "informationUri": "https://memrepo.dev", "rules": list(rules.values())}},
        "results": results}]}
