"""YAML loading for untrusted files: no aliases (billion laughs), bounded size and depth."""
from __future__ import annotations

from typing import Any

import yaml

from ..errors import ParseError

MAX_YAML_BYTES = 256 * 1024
MAX_DEPTH = 32


class _NoAliasLoader(yaml.SafeLoader):
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


def _plain_timestamps() -> None:
    # Keep dates as strings: entry fields are compared and round-tripped as text.
    resolvers = _NoAliasLoader.yaml_implicit_resolvers
    for key, items in list(resolvers.items()):
        resolvers[key] = [(tag, rx) for tag, rx in items if tag != "tag:yaml.org,2002:timestamp"]


_NoAliasLoader.yaml_implicit_resolvers = {k: list(v) for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_plain_timestamps()


_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def _plain_enough(text: str) -> bool:
    """True when the text cannot hold an anchor, an alias or deep nesting: libyaml may parse it.

    Anything else takes the pure-Python loader, which refuses aliases and counts depth exactly.
    """
    if "&" in text or "*" in text or "!" in text or text.count("[") + text.count("{") > MAX_DEPTH:
        return False
    return all(len(line) - len(line.lstrip(" ")) <= MAX_DEPTH for line in text.split("\n"))


if _FAST_LOADER is not None:
    class _FastLoader(_FAST_LOADER):  # type: ignore[misc, valid-type]
        """libyaml's safe loader with the same resolvers (dates stay strings)."""

    _FastLoader.yaml_implicit_resolvers = _NoAliasLoader.yaml_implicit_resolvers


def _load_fast(text: str) -> Any:
    return yaml.load(text, Loader=_FastLoader)


def load_yaml(text: str, where: str, *, max_bytes: int = MAX_YAML_BYTES, first_line: int = 1) -> Any:
    """Parse untrusted YAML; any failure is a ParseError naming ``where`` and the file line
    (``first_line`` is the file line the text starts on, e.g. 2 for frontmatter)."""
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise ParseError(f"YAML is larger than {max_bytes:,} bytes", where=where, hint="split or shorten the file")
    try:
        if _FAST_LOADER is not None and _plain_enough(text):
            try:
                return _load_fast(text)
            except yaml.YAMLError:
                pass  # the pure-Python loader below reports the same error with PyYAML's exact position
        return yaml.load(text, Loader=_NoAliasLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f":{mark.line + first_line}" if mark is not None else ""
        raise ParseError(f"YAML does not parse: {exc.problem or exc.context}", where=f"{where}{line}",
                         hint="fix the YAML syntax (no anchors/aliases, no deep nesting)") from None
    except (yaml.YAMLError, RecursionError, ValueError, TypeError) as exc:
        raise ParseError(f"YAML does not parse: {exc}", where=where, hint="fix the YAML syntax") from None


def dump_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1 << 30, default_flow_style=None)
