"""Skills: ``skills/[category/]<name>/SKILL.md`` plus supporting files, per the Agent Skills specification.

SKILL.md is YAML frontmatter (``name``, ``description``, optional ``license``,
``compatibility``, ``metadata``, ``allowed-tools``) and a Markdown body. memrepo's
own fields live under ``metadata`` as strings so the file stays valid for other
tools: ``version``, ``origin`` and ``tags`` (comma-separated). Supporting files
live only under ``references/``, ``templates/``, ``scripts/`` and ``assets/``.

This module checks structure only (schema, names, paths, modes, caps); content
and security scanning belong to :mod:`memrepo.detect`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from ..errors import MemrepoError, ParseError, UsageError
from ..findings import Finding
from ..resources import default_policies_dir
from .safeyaml import _yaml, load_yaml
from .text import decode_utf8, split_frontmatter

if TYPE_CHECKING:
    import jsonschema

SKILLS_DIR = "skills"
SKILL_MD = "SKILL.md"
SPEC_DIRS = ("references", "templates", "scripts", "assets")
NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
NAME_MAX = 64
FIELD_ORDER = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")

MODE_FILE = 0o100644
MODE_EXECUTABLE = 0o100755
MODE_SYMLINK = 0o120000
MODE_SUBMODULE = 0o160000

_NAME_HINT = "use 1-64 characters of a-z, 0-9 and single hyphens, not starting or ending with a hyphen (e.g. 'review-pr')"


@dataclass(frozen=True)
class Skill:
    """One skill: the SKILL.md frontmatter fields, its body, and the category folder it lives in.

    ``allowed_tools`` is the specification's space-separated string, kept as written.
    ``category`` comes from the path (``skills/<category>/<name>``), not from the file.
    """

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict, hash=False)
    allowed_tools: str | None = None
    body: str = ""
    category: str | None = None

    @property
    def tags(self) -> tuple[str, ...]:
        """``metadata['tags']`` split on commas, blanks dropped."""
        return split_tags(self.metadata.get("tags", ""))

    @property
    def version(self) -> str | None:
        return self.metadata.get("version")

    @property
    def origin(self) -> str | None:
        return self.metadata.get("origin")

    @property
    def path(self) -> str:
        """The repository path of this skill's SKILL.md."""
        return f"{skill_dir(self.name, self.category)}/{SKILL_MD}"

    def with_(self, **changes: Any) -> Skill:
        return replace(self, **changes)

    def frontmatter(self) -> dict[str, Any]:
        """The frontmatter mapping in the specification's field order; unset fields are left out."""
        out: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.license is not None:
            out["license"] = self.license
        if self.compatibility is not None:
            out["compatibility"] = self.compatibility
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        if self.allowed_tools is not None:
            out["allowed-tools"] = self.allowed_tools
        return out


def split_tags(text: str) -> tuple[str, ...]:
    return tuple(t.strip() for t in text.split(",") if t.strip())


def join_tags(tags: Iterable[str]) -> str:
    """The ``metadata['tags']`` string for a list of tags (a tag may not hold a comma)."""
    out = []
    for tag in tags:
        if "," in tag:
            raise UsageError(f"tag {tag!r} holds a comma", where="metadata.tags", hint="tags are comma-separated; drop the comma")
        if tag.strip():
            out.append(tag.strip())
    return ", ".join(out)


# --- names and paths ---------------------------------------------------------------------------


def check_skill_name(name: object, where: str = "name") -> str:
    """Refuse a skill (or category) name outside the specification's rules; return it unchanged."""
    if not isinstance(name, str) or len(name) > NAME_MAX or not NAME_RE.match(name):
        raise UsageError(f"invalid skill name {name!r}", where=where, hint=_NAME_HINT)
    return name


def check_category(category: object, where: str = "category") -> str:
    """A category is one folder level with the same rules as a name, and not one of the supporting dirs."""
    name = check_skill_name(category, where)
    if name in SPEC_DIRS:
        raise UsageError(f"category {name!r} is reserved for supporting files", where=where,
                         hint=f"pick a category other than {', '.join(SPEC_DIRS)}")
    return name


def skill_dir(name: str, category: str | None = None) -> str:
    """``skills/[category/]name``; both parts are checked, so the result is always a safe path."""
    check_skill_name(name)
    if category is None:
        return f"{SKILLS_DIR}/{name}"
    return f"{SKILLS_DIR}/{check_category(category)}/{name}"


def locate(path: str) -> tuple[str | None, str, str] | None:
    """Map a repository path under ``skills/`` to ``(category, name, relpath)``; anything else -> None.

    ``skills/<name>/SKILL.md`` and ``skills/<name>/<supporting dir>/...`` have no category;
    otherwise the first level below ``skills/`` is the category. Names are not checked here.
    """
    parts = path.split("/")
    if len(parts) < 3 or parts[0] != SKILLS_DIR or not all(parts[1:]):
        return None
    if len(parts) == 3 or parts[2] in SPEC_DIRS:
        return None, parts[1], "/".join(parts[2:])
    if len(parts) < 4:
        return None
    return parts[1], parts[2], "/".join(parts[3:])


def check_supporting_path(relpath: object, *, allowed_dirs: Iterable[str] = SPEC_DIRS) -> str:
    """Refuse a supporting-file path that could escape the skill folder or sits outside the allowed dirs.

    Returns ``relpath`` unchanged when it is a plain relative path like ``references/api.md``.
    """
    allowed = tuple(allowed_dirs)
    hint = "write it as '<dir>/<file>' with <dir> one of " + ", ".join(allowed) + " (forward slashes, no '..')"
    where = f"file {relpath!r}"
    if not isinstance(relpath, str) or not relpath:
        raise UsageError("empty supporting-file path", where=where, hint=hint)
    problem = _path_problem(relpath, allowed)
    if problem:
        raise UsageError(problem, where=where, hint=hint)
    return relpath


def _path_problem(relpath: str, allowed: tuple[str, ...]) -> str:
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in relpath):
        return "path holds control characters"
    if "\\" in relpath:
        return "path holds a backslash"
    if relpath.startswith("/") or re.match(r"^[A-Za-z]:", relpath):
        return "path is absolute"
    parts = relpath.split("/")
    if any(p in (".", "..") for p in parts):
        return "path holds '.' or '..'"
    if any(not p for p in parts):
        return "path has an empty part ('//' or a trailing '/')"
    if any(p.lower() == ".git" for p in parts):
        return "path names a .git folder"
    if any(len(p.encode("utf-8", "surrogatepass")) > 255 for p in parts):
        return "a path part is longer than 255 bytes"
    if len(parts) < 2 or parts[0] not in allowed:
        return "supporting files live only under " + ", ".join(f"{d}/" for d in allowed)
    return ""


# --- parse and serialise -----------------------------------------------------------------------


@lru_cache(maxsize=1)
def default_skill_schema() -> dict[str, Any]:
    """policies/schemas/skill.schema.json as shipped with memrepo."""
    return json.loads((default_policies_dir() / "schemas" / "skill.schema.json").read_text(encoding="utf-8"))


def schema_problems(meta: Mapping[str, Any], schema: Mapping[str, Any] | None = None,
                    is_valid: Callable[[Any], bool] | None = None) -> list[tuple[str, tuple[str, ...]]]:
    """Every schema violation of a frontmatter mapping as (message, key path), in a stable order.

    ``is_valid``: a fast check of the same schema, trusted only to say "valid" (policy.fastschema);
    jsonschema is imported and run only for the messages of an invalid mapping."""
    if is_valid is not None and is_valid(meta) and not _key_type_problems(meta):
        return []
    import jsonschema  # lazily: ~90 ms to import

    validator = jsonschema.Draft202012Validator(schema if schema is not None else default_skill_schema())
    out = _key_type_problems(meta)
    for err in validator.iter_errors(meta):
        if err.validator == "pattern" and err.instance == "":
            continue  # minLength already says it is empty
        keys = tuple(str(k) for k in err.absolute_path) or _unknown_keys(err)[:1]
        out.append((_schema_message(err, keys), keys))
    return sorted(out, key=lambda item: (item[1], item[0]))


def _key_type_problems(meta: Mapping[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    # JSON Schema only sees string keys; YAML can also make numbers or booleans keys.
    metadata = meta.get("metadata")
    if isinstance(metadata, Mapping) and any(not isinstance(k, str) for k in metadata):
        return [("metadata keys must be strings (quote them)", ("metadata",))]
    return []


def _unknown_keys(err: jsonschema.ValidationError) -> tuple[str, ...]:
    if err.validator != "additionalProperties" or err.absolute_path or not isinstance(err.instance, dict):
        return ()
    return tuple(sorted(str(k) for k in err.instance if k not in FIELD_ORDER))


def _schema_message(err: jsonschema.ValidationError, keys: tuple[str, ...]) -> str:
    label = ".".join(keys) or "frontmatter"
    if err.validator == "additionalProperties" and not err.absolute_path:
        extra = _unknown_keys(err)
        return f"unknown field(s) {', '.join(map(repr, extra))}; put memrepo or tool fields under 'metadata'"
    if err.validator == "pattern" and keys == ("name",):
        return f"name {err.instance!r} is not 1-64 characters of a-z, 0-9 and single hyphens"
    if err.validator == "pattern" and keys == ("description",):
        return "description is blank"
    if err.validator == "type" and len(keys) == 2 and keys[0] == "metadata":
        return f"metadata.{keys[1]} is a {type(err.instance).__name__}, not a string (quote it)"
    return f"{label}: {err.message}"


def _key_line(front: str, keys: tuple[str, ...]) -> int:
    """The frontmatter line (file line numbers: frontmatter starts on line 2) that sets ``keys``."""
    lines = front.split("\n")
    found, depth = 0, 0
    for i, line in enumerate(lines):
        if depth >= len(keys):
            break
        indent = r"\s*" if depth else ""
        if re.match(rf"^{indent}['\"]?{re.escape(keys[depth])}['\"]?\s*:", line):
            found, depth = i + 2, depth + 1
    return found or 1


def read_frontmatter(data: bytes, where: str) -> tuple[dict[str, Any], str, str]:
    """Decode SKILL.md into (frontmatter mapping, frontmatter text, body); ParseError if it does not parse."""
    front, body, _ = split_frontmatter(decode_utf8(data, where), where)
    try:
        meta = load_yaml(front, where)
    except ParseError as exc:  # load_yaml counts lines from the frontmatter; the file has '---' first
        line = _line_of(exc.where)
        raise ParseError(exc.what, where=f"{where}:{line + 1}" if line else where, hint=exc.hint) from None
    if not isinstance(meta, dict):
        raise ParseError(f"frontmatter is a {type(meta).__name__}, not a mapping", where=f"{where}:2",
                         hint="write the fields as 'key: value' lines")
    return meta, front, body


def parse_skill_md(data: bytes, where: str, *, category: str | None = None, schema: Mapping[str, Any] | None = None) -> Skill:
    """Parse SKILL.md bytes; the frontmatter must satisfy the skill schema.

    ``category`` defaults to the one in ``where`` when that is a repository path
    (``skills/<category>/<name>/SKILL.md``). Raises ParseError naming the line.
    """
    meta, front, body = read_frontmatter(data, where)
    problems = schema_problems(meta, schema)
    if problems:
        message, keys = problems[0]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ParseError(message + more, where=f"{where}:{_key_line(front, keys)}",
                         hint="see policies/schemas/skill.schema.json (Agent Skills specification)")
    if category is None:
        loc = locate(where)
        category = loc[0] if loc else None
    return Skill(
        name=meta["name"], description=meta["description"], license=meta.get("license"),
        compatibility=meta.get("compatibility"), metadata=dict(meta.get("metadata") or {}),
        allowed_tools=meta.get("allowed-tools"), body=body, category=category,
    )


def serialise_skill_md(skill: Skill) -> bytes:
    """The SKILL.md bytes for a skill: deterministic, and ``parse_skill_md`` gives the same skill back."""
    if "\x00" in skill.body:
        raise UsageError("the body holds a NUL character", where=skill.name, hint="SKILL.md is UTF-8 text; drop the NUL")
    front = _yaml().dump(skill.frontmatter(), Dumper=_dumper(), sort_keys=False, allow_unicode=True, width=1 << 30,
                         default_flow_style=False)
    return f"---\n{front}---\n{skill.body}".encode()


@cache
def _dumper() -> Any:
    """Safe YAML that escapes characters a YAML reader would otherwise take as line breaks or drop
    (built on first use: reading skills needs no YAML writer)."""
    yaml = _yaml()

    class Dumper(yaml.SafeDumper):  # type: ignore[misc, name-defined]
        pass

    def represent_str(dumper: Any, value: str) -> Any:
        style = '"' if any(_needs_escape(ch) for ch in value) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, represent_str)
    return Dumper


def _needs_escape(ch: str) -> bool:
    code = ord(ch)
    return (code < 0x20 and ch != "\n") or 0x7F <= code <= 0x9F or ch in "\u2028\u2029\ufeff"




def conform_frontmatter(meta: Mapping[Any, Any]) -> tuple[dict[str, Any], list[str]]:
    """Fold foreign frontmatter (e.g. Hermes Agent's) into the specification's shape, for import.

    Specification fields stay; every other top-level field moves under ``metadata``
    (as ``frontmatter.<key>`` where metadata already has the key); nested metadata is flattened to dotted keys (``hermes.related_skills``). Values
    become strings: lists of plain scalars are comma-joined, anything else is
    compact JSON. The first ``tags`` list found (top level, then nested) fills
    ``metadata['tags']`` unless it is already set. Returns the new mapping and one
    note per change, for the import report. Nothing is validated here.
    """
    out: dict[str, Any] = {str(k): v for k, v in meta.items() if k in FIELD_ORDER and k != "metadata"}
    metadata: dict[str, str] = {}
    notes: list[str] = []
    nested = meta.get("metadata")
    if isinstance(nested, Mapping):
        for key, value in _flatten(nested, ""):
            metadata[key] = _as_text(value)
            if "." in key or not isinstance(value, str):
                notes.append(f"metadata.{key} written as text")
    elif nested is not None:
        metadata["metadata"] = _as_text(nested)
        notes.append("metadata was not a mapping; kept as text under metadata.metadata")
    for key, value in meta.items():
        if key not in FIELD_ORDER:
            target = str(key) if str(key) not in metadata else f"frontmatter.{key!s}"
            metadata[target] = _as_text(value)
            notes.append(f"moved {key!s} to metadata.{target}")
    tags = next((v for k, v in _flatten(meta, "") if k.split(".")[-1] == "tags" and isinstance(v, list)), None)
    if "tags" not in metadata and tags is not None:
        metadata["tags"] = _as_text(tags)
    if metadata:
        out["metadata"] = metadata
    return out, notes


def _flatten(mapping: Mapping[Any, Any], prefix: str) -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = []
    for key, value in mapping.items():
        name = f"{prefix}{key!s}"
        if isinstance(value, Mapping) and value:
            items.extend(_flatten(value, name + "."))
        else:
            items.append((name, value))
    return items


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and "," not in str(v) for v in value):
        return ", ".join(str(v) for v in value)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return str(value)
    try:
        return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
    except (TypeError, ValueError):  # keys of mixed types cannot be sorted
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def index_description(description: str, limit: int | None) -> str:
    """A description as one line for the skill index: whitespace collapsed, cut to ``limit`` characters with '…'."""
    line = " ".join(description.split())
    if limit is None or len(line) <= limit:
        return line
    return line[: max(limit - 1, 0)].rstrip() + "…"


# --- validation --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SkillCaps:
    """The ``skills:`` section of policy.yaml; a missing cap is not checked."""

    skill_md_max_bytes: int | None = None
    file_max_bytes: int | None = None
    max_files: int | None = None
    description_recommended_chars: int | None = None
    index_description_chars: int | None = None
    allowed_dirs: tuple[str, ...] = SPEC_DIRS

    @classmethod
    def from_policy(cls, section: Mapping[str, Any] | None) -> SkillCaps:
        section = section or {}
        ints = {k: section.get(k) for k in ("skill_md_max_bytes", "file_max_bytes", "max_files",
                                              "description_recommended_chars", "index_description_chars")}
        dirs = section.get("allowed_dirs")
        return cls(**ints, allowed_dirs=tuple(dirs) if dirs is not None else SPEC_DIRS)


def validate_skill(files: Mapping[str, tuple[int, bytes]], *, folder_name: str, policy_skills: Mapping[str, Any] | None,
                   category: str | None = None, schema: Mapping[str, Any] | None = None,
                   is_valid: Callable[[Any], bool] | None = None) -> list[Finding]:
    """Check one skill folder's structure and return findings (never raises for bad content).

    ``files`` maps each path inside the skill folder (``SKILL.md``, ``references/x.md``)
    to its git mode and bytes. Checks: SKILL.md present, parses and fits the schema;
    name equals ``folder_name``; regular files only (no symlinks or submodules);
    supporting files only under the allowed dirs; the policy caps (SKILL.md size,
    file size, files per skill) and the recommended description length (a warning).
    """
    caps = SkillCaps.from_policy(policy_skills)
    base = _base_path(folder_name, category)
    findings = _folder_findings(files, base, folder_name, caps)
    for relpath in sorted(files):
        mode, data = files[relpath]
        findings.extend(_file_findings(relpath, mode, data, f"{base}/{relpath}", folder_name, caps))
    if SKILL_MD in files:
        findings.extend(_skill_md_findings(files[SKILL_MD][1], f"{base}/{SKILL_MD}", folder_name, caps, schema, is_valid))
    return findings


def _base_path(folder_name: str, category: str | None) -> str:
    return f"{SKILLS_DIR}/{category}/{folder_name}" if category else f"{SKILLS_DIR}/{folder_name}"


def _finding(rule: str, message: str, path: str, hint: str, entry: str, *, line: int = 0,
             severity: str = "error") -> Finding:
    return Finding(rule=rule, severity=severity, message=message, path=path, line=line, hint=hint,  # type: ignore[arg-type]
                   category="skill", entry=entry)


def _folder_findings(files: Mapping[str, tuple[int, bytes]], base: str, name: str, caps: SkillCaps) -> list[Finding]:
    out = []
    try:
        check_skill_name(name, where=base)
    except UsageError as exc:
        out.append(_finding("skill.folder-name", exc.what, base, exc.hint, name))
    if SKILL_MD not in files:
        out.append(_finding("skill.missing-skill-md", "the skill folder has no SKILL.md", base,
                            "add SKILL.md with 'name' and 'description' frontmatter", name))
    if caps.max_files is not None and len(files) > caps.max_files:
        out.append(_finding("skill.too-many-files", f"{len(files)} files, more than the cap of {caps.max_files}", base,
                            "merge or drop supporting files", name))
    return out


def _file_findings(relpath: str, mode: int, data: bytes, path: str, name: str, caps: SkillCaps) -> list[Finding]:
    out = []
    if relpath != SKILL_MD:
        try:
            check_supporting_path(relpath, allowed_dirs=caps.allowed_dirs)
        except UsageError as exc:
            out.append(_finding("skill.path", exc.what, path, exc.hint, name))
    out.extend(_mode_findings(relpath, mode, path, name))
    limit = caps.skill_md_max_bytes if relpath == SKILL_MD else caps.file_max_bytes
    if limit is not None and len(data) > limit:
        rule = "skill.skill-md-size" if relpath == SKILL_MD else "skill.file-size"
        out.append(_finding(rule, f"{len(data):,} bytes, more than the cap of {limit:,}", path,
                            "shorten it, or move detail into references/", name))
    return out


def _mode_findings(relpath: str, mode: int, path: str, name: str) -> list[Finding]:
    if mode == MODE_SYMLINK:
        return [_finding("skill.symlink", "symbolic links are not allowed in a skill", path,
                         "store the file's content instead of a link", name)]
    if mode == MODE_SUBMODULE:
        return [_finding("skill.submodule", "submodules are not allowed in a skill", path,
                         "copy the needed files into the skill", name)]
    if mode not in (MODE_FILE, MODE_EXECUTABLE):
        return [_finding("skill.mode", f"unexpected file mode {mode:o}", path, "store a regular file", name)]
    if mode == MODE_EXECUTABLE and not relpath.startswith("scripts/"):
        return [_finding("skill.executable", "executable file outside scripts/", path,
                         "move it under scripts/ or drop the executable bit", name, severity="warning")]
    return []


def _skill_md_findings(data: bytes, path: str, folder_name: str, caps: SkillCaps,
                       schema: Mapping[str, Any] | None, is_valid: Callable[[Any], bool] | None = None) -> list[Finding]:
    try:
        meta, front, _ = read_frontmatter(data, path)
    except MemrepoError as exc:
        return [_finding("skill.parse", exc.what, path, exc.hint, folder_name, line=_line_of(exc.where))]
    problems = schema_problems(meta, schema, is_valid)
    out = [_finding("skill.schema", message, path, "see policies/schemas/skill.schema.json (Agent Skills specification)",
                    folder_name, line=_key_line(front, keys)) for message, keys in problems]
    name = meta.get("name")
    if isinstance(name, str) and name != folder_name:
        out.append(_finding("skill.name-mismatch", f"name {name!r} differs from its folder {folder_name!r}", path,
                            f"set 'name: {folder_name}' or rename the folder to {name!r}", folder_name,
                            line=_key_line(front, ("name",))))
    out.extend(_description_findings(meta.get("description"), path, front, folder_name, caps))
    return out


def _description_findings(description: object, path: str, front: str, name: str, caps: SkillCaps) -> list[Finding]:
    limit = caps.description_recommended_chars
    if not isinstance(description, str) or limit is None or len(description) <= limit:
        return []
    return [_finding("skill.description-length", f"description is {len(description)} characters, more than the "
                     f"recommended {limit}", path, "every prompt carries the index: say what the skill does and when "
                     "to use it in one or two sentences", name, line=_key_line(front, ("description",)), severity="warning")]


def _line_of(where: str) -> int:
    tail = where.rsplit(":", 1)
    return int(tail[1]) if len(tail) == 2 and tail[1].isdigit() else 0
