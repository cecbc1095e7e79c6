"""Skill folder scan: SKILL.md and its supporting files, modes, links and sizes."""
from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from ..findings import Finding, escape_excerpt
from .rxcache import compile_cached

if TYPE_CHECKING:
    from .scanner import Scanner

MODE_FILE = 0o100644
MODE_EXEC = 0o100755
MODE_SYMLINK = 0o120000
MODE_SUBMODULE = 0o160000

_BINARY_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe", b"#!")
_EXEC_MAGIC = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe", b"\xca\xfe\xba\xbe")
_B64_BLOB = r"[A-Za-z0-9+/]{%d,}={0,2}"
_HEX_BLOB = r"(?:\\x[0-9a-fA-F]{2}|[0-9a-fA-F]{2}){%d,}"
_NETWORK_FETCH = compile_cached(r"\b(?:curl|wget|Invoke-WebRequest|iwr|urllib\.request|requests\.(?:get|post)|fetch\(|http\.client)\b[^\n]{0,200}?(?:https?://|ftp://)", re.IGNORECASE)
_ENV_POST = compile_cached(r"\b(?:requests\.(?:post|put)|urlopen|http\.client|fetch)\b[^\n]{0,200}\b(?:os\.environ|process\.env|getenv)\b", re.IGNORECASE)


class SkillFile(NamedTuple):
    """One file of a skill folder as git stores it: ``mode`` (0o100644, 0o100755, 0o120000 symlink
    whose ``data`` is the link target, 0o160000 submodule) and ``data`` (bytes)."""

    mode: int
    data: bytes


def scan_skill(scanner: Scanner, files: Mapping[str, SkillFile]) -> list[Finding]:
    limits = scanner.skill_limits
    out: list[Finding] = []
    if "SKILL.md" not in files:
        out.append(_f("skill.no-skill-md", "warning", "the skill folder has no SKILL.md", "", "add SKILL.md with frontmatter"))
    if len(files) > limits.max_files:
        out.append(_f("skill.too-many-files", "error", f"{len(files)} files (limit {limits.max_files})", "",
                      "split the skill or remove files"))
    total = sum(len(f.data) for f in files.values() if f.mode not in (MODE_SYMLINK, MODE_SUBMODULE))
    if total > limits.max_total_bytes:
        out.append(_f("skill.too-large", "error", f"skill holds {total:,} bytes (limit {limits.max_total_bytes:,})", "",
                      "move large assets out of the skill"))
    for path in sorted(files):
        out.extend(_scan_file(scanner, path, files[path]))
    return out


def _scan_file(scanner: Scanner, path: str, f: SkillFile) -> list[Finding]:
    limits = scanner.skill_limits
    if f.mode == MODE_SUBMODULE:
        return [_f("skill.submodule", "error", "a git submodule: its content is not reviewed with the skill", path,
                   "vendor the needed files into the skill instead", category="skill-structure")]
    if f.mode == MODE_SYMLINK:
        return _symlink(path, f.data)
    out: list[Finding] = []
    in_scripts = path.startswith("scripts/")
    if f.mode == MODE_EXEC and not in_scripts:
        out.append(_f("skill.exec-outside-scripts", "warning", "executable file outside scripts/", path,
                      "move it to scripts/ or drop the executable bit", category="skill-structure"))
    cap = limits.skill_md_max_bytes if path == "SKILL.md" else limits.max_file_bytes
    if len(f.data) > cap:
        out.append(_f("skill.oversized-file", "error", f"{len(f.data):,} bytes (limit {cap:,}, policy skills:)", path,
                      "shrink the file or keep it outside the skill", category="skill-structure"))
        return out
    text = _as_text(f.data)
    if text is None:
        executable = f.data.startswith(_EXEC_MAGIC) or f.mode == MODE_EXEC
        out.append(_f("skill.binary", "error" if executable else "warning",
                      "executable binary: it cannot be reviewed" if executable else "binary or non-UTF-8 file", path,
                      "ship source, not binaries" if executable else "keep only reviewable text, or put media under assets/",
                      category="skill-structure"))
        return out
    out.extend(_scan_text_file(scanner, path, text, is_script=in_scripts or f.mode == MODE_EXEC or text.startswith("#!")))
    return out


def _symlink(path: str, data: bytes) -> list[Finding]:
    target = data.decode("utf-8", "replace")
    if target.startswith(("/", "~", "\\")) or re.match(r"^[A-Za-z]:[\\/]", target):
        return [_f("skill.symlink-absolute", "error", f"symlink to an absolute path: {escape_excerpt(target)}", path,
                   "replace the link with the file itself", category="skill-structure")]
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    if resolved == ".." or resolved.startswith("../"):
        return [_f("skill.symlink-escape", "error", f"symlink leaves the skill folder: {escape_excerpt(target)}", path,
                   "replace the link with the file itself", category="skill-structure")]
    return [_f("skill.symlink", "info", f"symlink inside the skill to {escape_excerpt(target)}", path, "", category="skill-structure")]


def _as_text(data: bytes) -> str | None:
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _scan_text_file(scanner: Scanner, path: str, text: str, *, is_script: bool) -> list[Finding]:
    out: list[Finding] = []
    for first_line, chunk in _chunks(text, max(1024, scanner.max_entry_bytes - 1024)):
        for finding in scanner.scan_text(chunk, path=path, line=first_line):
            if finding.rule == "score.directive":
                # Skill bodies are instructions by design; the score only warns there.
                finding = replace(finding, severity="warning")
            if all(o.rule != finding.rule for o in out):
                out.append(finding)
    blob = re.search(_B64_BLOB % scanner.skill_limits.blob_min_chars, text) or re.search(
        _HEX_BLOB % (scanner.skill_limits.blob_min_chars // 2), text)
    if blob:
        out.append(_f("skill.obfuscated-blob", "error" if is_script else "warning",
                      f"a {len(blob.group(0)):,}-character encoded blob", path,
                      "ship readable source; encoded payloads hide what runs", line=1 + text.count("\n", 0, blob.start()),
                      category="obfuscation", excerpt=escape_excerpt(blob.group(0)[:60])))
    if is_script:
        post = _ENV_POST.search(text)
        if post:
            out.append(_f("skill.env-exfiltration", "error", "sends environment variables over the network", path,
                          "scripts must not post the environment anywhere", line=1 + text.count("\n", 0, post.start()),
                          category="exfiltration", excerpt=escape_excerpt(post.group(0))))
        fetch = _NETWORK_FETCH.search(text)
        if fetch and not any(o.category == "remote-exec" for o in out):
            out.append(_f("skill.network-fetch", "warning", "the script downloads from the network", path,
                          "pin and verify what is downloaded (checksum), or vendor it", line=1 + text.count("\n", 0, fetch.start()),
                          category="remote-exec", excerpt=escape_excerpt(fetch.group(0))))
    return out


def _chunks(text: str, size: int) -> list[tuple[int, str]]:
    if len(text) <= size:
        return [(1, text)]
    out, line, start = [], 1, 0
    while start < len(text):
        end = text.rfind("\n", start, start + size)
        end = start + size if end <= start else end + 1
        out.append((line, text[start:end]))
        line += text.count("\n", start, end)
        start = end
    return out


def _f(rule: str, severity: str, message: str, path: str, hint: str, *, line: int = 0, category: str = "skill-structure",
       excerpt: str = "") -> Finding:
    return Finding(rule, severity, message, path=path, line=line, hint=hint, category=category, excerpt=excerpt)  # type: ignore[arg-type]
