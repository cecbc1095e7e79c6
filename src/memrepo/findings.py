"""Findings: the one result type every check returns; reporters render them."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    path: str = ""
    line: int = 0
    hint: str = ""
    category: str = ""
    normalisation: str = ""  # which normalisation step revealed it ("" = raw text)
    excerpt: str = ""
    entry: str = ""  # entry id or skill name the finding is about
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    @property
    def blocking(self) -> bool:
        return self.severity == "error"

    def to_json(self) -> dict[str, object]:
        out = asdict(self)
        if not self.extra:
            out.pop("extra")
        return out

    def at(self, path: str, line_offset: int = 0, entry: str = "") -> Finding:
        """The same finding placed in a file (line numbers shifted by ``line_offset``)."""
        from dataclasses import replace

        return replace(self, path=path or self.path, line=(self.line + line_offset) if self.line else self.line,
                       entry=entry or self.entry)



def escape_excerpt(text: str, limit: int = 120) -> str:
    """A printable, single-line excerpt: control and invisible characters escaped."""
    out = []
    for ch in text:
        cp = ord(ch)
        if ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif cp < 0x20 or cp == 0x7F or 0x200B <= cp <= 0x200F or 0x202A <= cp <= 0x202E or 0x2060 <= cp <= 0x2069 or cp == 0xFEFF or 0xE0000 <= cp <= 0xE007F:
            out.append(f"\\u{cp:04x}" if cp <= 0xFFFF else f"\\U{cp:08x}")
        else:
            out.append(ch)
        if len(out) >= limit:
            out.append("…")
            break
    return "".join(out)
