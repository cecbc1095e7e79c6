"""Memory entries: one file per entry, YAML frontmatter with the ten Agent OS fields + body."""
from __future__ import annotations

import hashlib
import re
import secrets
import time
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ParseError, UsageError
from .safeyaml import dump_yaml, load_yaml
from .text import decode_utf8, split_frontmatter

FIELDS = ("id", "kind", "type", "source_type", "verification", "ttl", "tags", "updated", "ver", "origin")
ORIGINS = ("verified_manual", "agent_inferred", "external_tool")
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
_B32 = "0123456789abcdefghjkmnpqrstvwxyz"
MEMORIES_DIR = "memories"
ENTRY_DELIMITER = "\n§\n"  # Hermes Agent's entry separator in MEMORY.md / USER.md


@dataclass(frozen=True)
class Entry:
    """One memory entry. ``text`` is the content (the file body)."""

    id: str
    text: str
    scope: str = "memory"
    kind: str = "fact"
    type: str = "note"
    source_type: str = "agent"
    verification: str = "pending"
    ttl: str = "permanent"
    tags: tuple[str, ...] = ()
    updated: str = ""
    ver: int = 1
    origin: str = "agent_inferred"
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    def fields(self) -> dict[str, Any]:
        return {
            "id": self.id, "kind": self.kind, "type": self.type, "source_type": self.source_type,
            "verification": self.verification, "ttl": self.ttl, "tags": list(self.tags),
            "updated": self.updated, "ver": self.ver, "origin": self.origin,
        }

    def with_(self, **changes: Any) -> Entry:
        return replace(self, **changes)


def normalise_text(text: str) -> str:
    """For exact-duplicate detection: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def text_digest(text: str) -> str:
    """A short digest of the normalised text (equal for exact duplicates)."""
    return hashlib.sha1(normalise_text(text).encode("utf-8", "surrogatepass")).hexdigest()[:20]


def check_id(entry_id: str, where: str = "id") -> str:
    """Refuse ids that are unsafe as file names (path separators, '..', odd characters)."""
    if not isinstance(entry_id, str) or not ID_RE.match(entry_id):
        raise UsageError(f"invalid entry id {entry_id!r}", where=where,
                         hint="ids are 1-64 letters, digits, '-' or '_', starting with a letter or digit; no '/', '\\' or '..'")
    return entry_id


def new_id(scope: str, now: float | None = None) -> str:
    """A fresh, time-ordered, file-name-safe id, e.g. ``m261129-0k3b5xq7r``.

    Day, then milliseconds of the day (6 base32 digits), then 3 random digits: ids sort in
    creation order, so entries written in the same second still render in write order.
    """
    stamp = now if now is not None else time.time()
    t = time.gmtime(stamp)
    ms = int((stamp % 86400) * 1000)
    clock = "".join(_B32[(ms >> (5 * i)) & 31] for i in range(5, -1, -1))
    rand = "".join(secrets.choice(_B32) for _ in range(3))
    return f"{scope[:1].lower() or 'e'}{time.strftime('%y%m%d', t)}-{clock}{rand}"


def now_iso(now: float | None = None) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now if now is not None else time.time()))


def bucket_of(entry_id: str) -> str:
    """The fan-out folder of an id in a large scope: its last two characters, lower-cased."""
    return (entry_id.lower() + "__")[-2:] if len(entry_id) < 2 else entry_id[-2:].lower()


def entry_path(scope: str, entry_id: str, fanout: bool = False) -> str:
    """``memories/<scope>/<id>.md``, or ``memories/<scope>/<bucket>/<id>.md`` in a fanned-out scope.

    Measured with pygit2: a commit rewrites the whole folder's tree object, so a flat folder of
    10,000 entries costs ~9 ms per write and 100,000 ~90 ms; buckets keep it near 1 ms.
    """
    if fanout:
        return f"{MEMORIES_DIR}/{scope}/{bucket_of(entry_id)}/{entry_id}.md"
    return f"{MEMORIES_DIR}/{scope}/{entry_id}.md"


def candidate_paths(scope: str, entry_id: str) -> tuple[str, str]:
    return entry_path(scope, entry_id), entry_path(scope, entry_id, fanout=True)


def path_scope_id(path: str) -> tuple[str, str] | None:
    """``memories/<scope>/[<bucket>/]<id>.md`` -> (scope, id); anything else -> None.

    A bucketed path counts only when the bucket is the id's own (see :func:`bucket_of`).
    """
    parts = path.split("/")
    if parts[0] != MEMORIES_DIR or not parts[-1].endswith(".md") or parts[-1] == ".md":
        return None
    entry_id = parts[-1][:-3]
    if len(parts) == 3:
        return parts[1], entry_id
    if len(parts) == 4 and parts[2] == bucket_of(entry_id):
        return parts[1], entry_id
    return None


def parse_fields(data: bytes, where: str) -> tuple[dict[str, Any], str, int]:
    """Decode and split an entry file; the frontmatter must be a mapping."""
    text = decode_utf8(data, where)
    front, body, body_line = split_frontmatter(text, where)
    meta = load_yaml(front, where, first_line=2)
    if not isinstance(meta, dict):
        raise ParseError(f"frontmatter is a {type(meta).__name__}, not a mapping", where=f"{where}:2",
                         hint="write the fields as 'key: value' lines")
    return meta, body, body_line


def entry_body(data: bytes, path: str) -> str:
    """An entry file's text (``Entry.text``) without reading its fields: what duplicate detection
    compares. Raises ParseError for a file that is not UTF-8 or has no frontmatter."""
    _, body, _ = split_frontmatter(decode_utf8(data, path), path)
    return body.removesuffix("\n")


def parse_entry(data: bytes, path: str) -> Entry:
    """Parse ``memories/<scope>/<id>.md``. Field types are checked by the schema, not here."""
    return parse_entry_at(data, path)[0]


def parse_entry_at(data: bytes, path: str) -> tuple[Entry, int]:
    """:func:`parse_entry` and the file line where the entry's text begins."""
    loc = path_scope_id(path)
    meta, body, body_line = parse_fields(data, path)
    scope = loc[0] if loc else str(meta.get("scope", "memory"))
    text = body.removesuffix("\n")
    tags = meta.get("tags") or ()
    extra = {k: v for k, v in meta.items() if k not in FIELDS}
    try:
        return Entry(
            id=str(meta.get("id", loc[1] if loc else "")), text=text, scope=scope,
            kind=str(meta.get("kind", "")), type=str(meta.get("type", "")),
            source_type=str(meta.get("source_type", "")), verification=str(meta.get("verification", "")),
            ttl=str(meta.get("ttl", "")), tags=tuple(str(t) for t in tags) if isinstance(tags, (list, tuple)) else (str(tags),),
            updated=str(meta.get("updated", "")), ver=int(meta.get("ver", 1)) if not isinstance(meta.get("ver", 1), bool) else 1,
            origin=str(meta.get("origin", "")), extra=extra,
        ), body_line
    except (TypeError, ValueError, OverflowError) as exc:  # OverflowError: ver: .inf
        raise ParseError(f"frontmatter field has the wrong type: {exc}", where=path, hint="see policies/schemas/memory.schema.json") from None


def serialise_entry(entry: Entry) -> bytes:
    """The file bytes for an entry: deterministic for equal entries."""
    meta = entry.fields()
    meta.update(entry.extra)
    return f"---\n{dump_yaml(meta)}---\n{entry.text}\n".encode()
