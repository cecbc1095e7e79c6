"""YAML loading for untrusted files: no aliases (billion laughs), bounded size and depth."""
from __future__ import annotations

import re
from functools import cache
from typing import Any

from ..errors import ParseError

MAX_YAML_BYTES = 256 * 1024
MAX_DEPTH = 32


@cache
def _yaml() -> Any:
    """PyYAML and memrepo's loaders, imported on first need: entries in memrepo's own flat form
    are read and written without it (see ``_load_flat``), which keeps a CLI write's start-up short."""
    import yaml

    class NoAliasLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:  # type: ignore[override]
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.MarkedYAMLError(None, None, "YAML aliases are not allowed", event.start_mark)
            depth = getattr(self, "_depth", 0) + 1
            if depth > MAX_DEPTH:
                raise yaml.MarkedYAMLError(None, None, f"nesting deeper than {MAX_DEPTH} levels", self.peek_event().start_mark)
            self._depth = depth
            try:
                return super().compose_node(parent, index)
            finally:
                self._depth = depth - 1

    # Keep dates as strings: entry fields are compared and round-tripped as text.
    NoAliasLoader.yaml_implicit_resolvers = {
        k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
        for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
    fast = getattr(yaml, "CSafeLoader", None)
    if fast is not None:
        class FastLoader(fast):  # type: ignore[misc, valid-type]
            """libyaml's safe loader with the same resolvers (dates stay strings)."""

        FastLoader.yaml_implicit_resolvers = NoAliasLoader.yaml_implicit_resolvers
        fast = FastLoader
    yaml.NoAliasLoader, yaml.FastLoader_ = NoAliasLoader, fast
    return yaml


def _plain_enough(text: str) -> bool:
    """True when the text cannot hold an anchor, an alias or deep nesting: libyaml may parse it.

    Anything else takes the pure-Python loader, which refuses aliases and counts depth exactly.
    """
    if "&" in text or "*" in text or "!" in text or text.count("[") + text.count("{") > MAX_DEPTH:
        return False
    return all(len(line) - len(line.lstrip(" ")) <= MAX_DEPTH for line in text.split("\n"))


def _load_fast(text: str) -> Any:
    yaml = _yaml()
    return yaml.load(text, Loader=yaml.FastLoader_)


# The flat form memrepo itself writes (``key: value`` lines of words, decimal integers,
# single-quoted strings and flow lists of words) is read without a YAML parser: a check of 10,000
# entries spends most of its parse time building YAML events for it. Anything else, or anything
# YAML would read differently (booleans, nulls, numbers in other notations, dates), takes the parser.
_FLAT_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*): (?:(0|[1-9][0-9]{0,17})|'((?:[^'\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]|'')*)'|"
                        r"([A-Za-z][A-Za-z0-9_-]*)|\[((?:[A-Za-z][A-Za-z0-9_-]*(?:, [A-Za-z][A-Za-z0-9_-]*)*)?)\])")
_YAML_WORDS = frozenset(w for base in ("yes", "no", "true", "false", "on", "off", "null")
                        for w in (base, base.capitalize(), base.upper()))


def _load_flat(text: str) -> dict[str, Any] | None:
    out: dict[str, Any] = {}
    for line in text.split("\n"):
        if not line:
            continue
        m = _FLAT_LINE.fullmatch(line)
        if m is None:
            return None
        key, num, quoted, word, items = m.groups()
        if key in _YAML_WORDS:
            return None
        if num is not None:
            out[key] = int(num)
        elif quoted is not None:
            out[key] = quoted.replace("''", "'")
        elif word is not None:
            if word in _YAML_WORDS:
                return None
            out[key] = word
        else:
            words = items.split(", ") if items else []
            if any(w in _YAML_WORDS for w in words):
                return None
            out[key] = words
    return out or None


def load_yaml(text: str, where: str, *, max_bytes: int = MAX_YAML_BYTES, first_line: int = 1) -> Any:
    """Parse untrusted YAML; any failure is a ParseError naming ``where`` and the file line
    (``first_line`` is the file line the text starts on, e.g. 2 for frontmatter)."""
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise ParseError(f"YAML is larger than {max_bytes:,} bytes", where=where, hint="split or shorten the file")
    flat = _load_flat(text)
    if flat is not None:
        return flat
    yaml = _yaml()
    try:
        if yaml.FastLoader_ is not None and _plain_enough(text):
            try:
                return _load_fast(text)
            except yaml.YAMLError:
                pass  # the pure-Python loader below reports the same error with PyYAML's exact position
        return yaml.load(text, Loader=yaml.NoAliasLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + first_line}" if mark is not None else ""
        raise ParseError(f"YAML does not parse: {exc.problem or exc.context}", where=f"{where}{line}",
                         hint="fix the YAML syntax (no anchors/aliases, no deep nesting)") from None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise ParseError(f"YAML does not parse: {exc}", where=where, hint="fix the YAML syntax") from None


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?:T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?")  # YAML reads both as timestamps


def _flat_value(value: Any) -> str | None:
    """``value`` as PyYAML's safe_dump writes it in a flat mapping, for the forms known to match
    it byte for byte (words, decimal integers, ISO dates, lists of words); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value) if -10**17 < value < 10**17 else None
    if isinstance(value, str):
        if _WORD.fullmatch(value) and value not in _YAML_WORDS:
            return value
        return f"'{value}'" if _DATE.fullmatch(value) else None
    if isinstance(value, list) and all(isinstance(v, str) and _WORD.fullmatch(v) and v not in _YAML_WORDS for v in value):
        return "[" + ", ".join(value) + "]"
    return None


def dump_yaml(data: Any) -> str:
    # PyYAML writes a mapping of scalars only in flow style ({a: b}): the flat form needs a list in it
    if isinstance(data, dict) and any(isinstance(v, list) for v in data.values()) and all(
            isinstance(k, str) and _WORD.fullmatch(k) and k not in _YAML_WORDS for k in data):
        lines = []
        for k, v in data.items():
            flat = _flat_value(v)
            if flat is None:
                break
            lines.append(f"{k}: {flat}\n")
        else:
            return "".join(lines)
    return _yaml().safe_dump(data, sort_keys=False, allow_unicode=True, width=1 << 30, default_flow_style=None)
