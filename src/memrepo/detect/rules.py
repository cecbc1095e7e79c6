"""Rule files (``policies/rules/*.yaml``): load, validate against rules.schema.json, compile.

A rule file holds one ``category``, optional ``vars`` (shared by all rule files, used as
``{name}`` in patterns), optional ``placeholders`` (secret values to skip), ``rules`` and
optionally one ``scoring`` block. See policies/schemas/rules.schema.json.
"""
from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ParseError
from ..model.safeyaml import load_yaml
from .needles import Needles, TextIndex, leading_boundary, literal_prefix, lower_pattern, matches
from .needles import needles as required_literals

_VAR_RE = re.compile(r"\{([a-z][a-z0-9_]*)\}")
_MAX_VAR_DEPTH = 4


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _at_boundary(text: str, i: int) -> bool:
    """What ``\\b`` means at position ``i``."""
    return (i > 0 and _is_word(text[i - 1])) != (i < len(text) and _is_word(text[i]))


Branch = tuple["Needles | None", "re.Pattern[str]", bool]  # (required literals, pattern, leading \b dropped)


def iter_branches(branches: tuple[Branch, ...], target: str, index: TextIndex) -> Iterator[re.Match[str]]:
    """Matches of each pattern whose required literals occur in the indexed (lower-cased) text.

    A leading ``\b`` is dropped at compile time (it stops re from using its fast prefix scan) and
    checked here instead, with the same meaning: word-ness changes at the match start."""
    for needles, rx, bounded in branches:
        if not matches(needles, index):
            continue
        for m in rx.finditer(target):
            if bounded and not _at_boundary(target, m.start()):
                continue
            yield m


def compile_branches(patterns: list[str], values: Mapping[str, str], where: str, case_sensitive: bool) -> tuple[Branch, ...]:
    out: list[Branch] = []
    for pattern in patterns:
        expanded = _check(pattern, values, where)
        source = expanded if case_sensitive else lower_pattern(expanded)
        bounded = leading_boundary(source)
        rx = re.compile(source[2:] if bounded else source, re.MULTILINE)
        gate = None if literal_prefix(rx.pattern) else required_literals(source, re.MULTILINE)
        out.append((gate, rx, bounded))
    return tuple(out)


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str
    message: str
    hint: str
    category: str
    regex: re.Pattern[str]  # all patterns combined
    branches: tuple[Branch, ...] = ()
    unless: re.Pattern[str] | None = None
    secret: bool = False
    langs: tuple[str, ...] = ()

    case_sensitive: bool = False

    def finditer(self, text: str, index: TextIndex) -> Iterator[re.Match[str]]:
        """Matches of each pattern whose required literals occur in ``lowered`` (``text.lower()``).

        Case-insensitive rules are compiled lower-cased and run on ``lowered`` (IGNORECASE is
        several times slower); match positions then refer to ``lowered``.
        """
        return iter_branches(self.branches, text if self.case_sensitive else index.lowered, index)


@dataclass(frozen=True)
class Feature:
    name: str
    weight: float
    description: str
    regex: re.Pattern[str]
    anchored: bool = False  # some pattern is anchored at the sentence start (^)
    branches: tuple[Branch, ...] = ()

    def finditer(self, index: TextIndex) -> Iterator[re.Match[str]]:
        return iter_branches(self.branches, index.lowered, index)


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)
    features: list[Feature] = field(default_factory=list)
    hidden_bonus: float = 2.0
    placeholders: tuple[re.Pattern[str], ...] = ()

    def is_placeholder(self, value: str) -> bool:
        return any(p.search(value) for p in self.placeholders)


def load_rule_files(files: Mapping[str, bytes], rules_dir: str = "rules") -> RuleSet:
    """Parse every ``<rules_dir>/*.yaml`` of ``files`` (keys relative to policies/)."""
    prefix = rules_dir.strip("/") + "/"
    docs: list[tuple[str, dict[str, Any]]] = []
    for name in sorted(files):
        if name.startswith(prefix) and name.endswith((".yaml", ".yml")):
            docs.append((name, _parse(name, files[name], files)))
    variables: dict[str, tuple[str, str]] = {}
    for name, doc in docs:
        for key, value in (doc.get("vars") or {}).items():
            if key in variables and variables[key][0] != value:
                raise ParseError(f"variable {key!r} is defined twice with different values",
                                 where=f"policies/{name}", hint=f"it is already defined in policies/{variables[key][1]}")
            variables[key] = (value, name)
    values = {k: v for k, (v, _) in variables.items()}
    out = RuleSet()
    seen: dict[str, str] = {}
    placeholders: list[re.Pattern[str]] = []
    for name, doc in docs:
        where = f"policies/{name}"
        for i, raw in enumerate(doc.get("rules") or []):
            rule = _compile_rule(raw, doc["category"], values, f"{where} (rules[{i}] {raw['id']})")
            if rule.id in seen:
                raise ParseError(f"rule id {rule.id!r} is used twice", where=where, hint=f"also in policies/{seen[rule.id]}; ids must be unique")
            seen[rule.id] = name
            out.rules.append(rule)
        for j, pat in enumerate(doc.get("placeholders") or []):
            placeholders.append(re.compile(_check(pat, values, f"{where} (placeholders[{j}])"), re.IGNORECASE))
        scoring = doc.get("scoring")
        if scoring:
            out.hidden_bonus = float(scoring.get("hidden_bonus", out.hidden_bonus))
            for k, feat in enumerate(scoring["features"]):
                _combine(feat["patterns"], values, f"{where} (scoring.features[{k}] {feat['name']})", re.IGNORECASE | re.MULTILINE)
                rx = re.compile(lower_pattern("|".join(f"(?:{_expand(p, values, where)})" for p in feat["patterns"])), re.MULTILINE)
                anchored = any(p.lstrip().startswith("^") for p in feat["patterns"])
                branches = compile_branches(feat["patterns"], values, where, False)
                out.features.append(Feature(feat["name"], float(feat["weight"]), feat.get("description", ""), rx, anchored,
                                            branches))
    out.placeholders = tuple(placeholders)
    return out


def _parse(name: str, data: bytes, files: Mapping[str, bytes]) -> dict[str, Any]:
    where = f"policies/{name}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ParseError("rule file is not UTF-8", where=where, hint="re-save it as UTF-8") from None
    doc = load_yaml(text, where)
    _validate(doc, where, text, files)
    return doc  # type: ignore[no-any-return]


def _validate(doc: Any, where: str, text: str, files: Mapping[str, bytes]) -> None:
    import jsonschema

    schema = _schema(files)
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(doc), key=lambda e: list(e.absolute_path))
    if not errors:
        return
    err = errors[0]
    path = list(err.absolute_path)
    line = _line_of(text, path)
    dotted = ".".join(str(p) for p in path) or "(top level)"
    raise ParseError(f"{dotted}: {err.message}", where=f"{where}:{line}" if line else where,
                     hint="see policies/schemas/rules.schema.json for the rule file format")


def _schema(files: Mapping[str, bytes]) -> dict[str, Any]:
    data = files.get("schemas/rules.schema.json")
    if data is None:
        from ..resources import default_policy_files

        data = default_policy_files()["schemas/rules.schema.json"]
    return json.loads(data)  # type: ignore[no-any-return]


def _line_of(text: str, path: list[Any]) -> int:
    """Best effort: the line of the deepest key or list item named by ``path``."""
    lines = text.split("\n")
    pos, indent = 0, -1
    for part in path:
        for i in range(pos, len(lines)):
            stripped = lines[i].lstrip()
            ind = len(lines[i]) - len(stripped)
            if isinstance(part, str) and ind > indent and re.match(rf"(?:- )?{re.escape(part)}\s*:", stripped):
                pos, indent = i, ind
                break
            if isinstance(part, int) and stripped.startswith("- ") and ind >= indent:
                count = sum(1 for j in range(pos, i + 1) if lines[j].lstrip().startswith("- ")
                            and len(lines[j]) - len(lines[j].lstrip()) == ind)
                if count == part + 1:
                    pos, indent = i, ind
                    break
    return pos + 1 if path else 0


def _compile_rule(raw: dict[str, Any], category: str, values: Mapping[str, str], where: str) -> Rule:
    case_sensitive = bool(raw.get("case_sensitive"))
    flags = re.MULTILINE | (0 if case_sensitive else re.IGNORECASE)
    regex = _combine(raw["patterns"], values, where, flags)
    branches = compile_branches(raw["patterns"], values, where, case_sensitive)
    unless = _combine(raw["unless"], values, where, re.IGNORECASE | re.MULTILINE) if raw.get("unless") else None
    return Rule(id=raw["id"], severity=raw["severity"], message=raw["message"], hint=raw.get("hint", ""),
                category=raw.get("category", category), regex=regex, branches=branches, unless=unless,
                secret=bool(raw.get("secret")), langs=tuple(raw.get("langs") or ()), case_sensitive=case_sensitive)


def _combine(patterns: list[str], values: Mapping[str, str], where: str, flags: int) -> re.Pattern[str]:
    expanded = [_check(p, values, where) for p in patterns]
    try:
        return re.compile("|".join(f"(?:{p})" for p in expanded), flags)
    except re.error as exc:
        raise ParseError(f"patterns do not combine: {exc}", where=where, hint="check the patterns' groups") from None


def _check(pattern: str, values: Mapping[str, str], where: str) -> str:
    expanded = _expand(pattern, values, where)
    try:
        re.compile(expanded)
    except re.error as exc:
        raise ParseError(f"pattern is not a valid regular expression: {exc} in {pattern[:80]!r}", where=where,
                         hint="fix the regular expression (Python re syntax; {name} inserts a variable)") from None
    return expanded


def _expand(pattern: str, values: Mapping[str, str], where: str) -> str:
    for _ in range(_MAX_VAR_DEPTH):
        missing = [m for m in _VAR_RE.findall(pattern) if m not in values]
        if missing:
            raise ParseError(f"unknown variable {{{missing[0]}}}", where=where,
                             hint="define it under vars: in a rule file, or escape the brace as \\{")
        new = _VAR_RE.sub(lambda m: values.get(m.group(1), m.group(0)), pattern)
        if new == pattern:
            return new
        pattern = new
    return pattern
