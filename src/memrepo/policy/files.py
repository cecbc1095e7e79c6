"""Findings for files of a tree, dispatched by where they live (memories/, skills/, policies/)."""
from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import MemrepoError
from ..findings import Finding
from ..gitstore import BLOB, COMMIT, EXEC, LINK, FileBlob
from ..model.entry import Entry, parse_entry_at, path_scope_id
from .checks import cap_findings, duplicate_id_findings, entry_findings
from .config import POLICY_DIR, Policy, load_policy
from .duplicates import file_duplicate_findings

MAX_FILE_BYTES = 1 << 20


# Names a checkout must never write: git's own folder under any spelling a file system folds onto it.
_GIT_DIR_NAMES = {".git", "git~1"}
RESERVED_TOP = ("memories", "skills", "policies")


def unsafe_path_finding(path: str) -> Finding | None:
    parts = path.split("/")
    if path.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in path:
        return Finding("path.unsafe", "error", f"unsafe path {path!r}", path=path,
                       hint="paths must be relative, without '..', '.' or backslashes", category="path")
    if any(p.casefold().rstrip(". ") in _GIT_DIR_NAMES for p in parts):
        return Finding("path.unsafe", "error", f"path {path!r} writes into git's own folder", path=path,
                       hint="a tree may not hold .git (in any case); a checkout would run or trust it", category="path")
    if not (path.isascii() and path.isprintable()) and any(ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF
                                                           for c in path):
        return Finding("path.unsafe", "error", f"path '{escape_path(path)}' holds control characters or is not UTF-8",
                       path=escape_path(path), hint="use printable UTF-8 file names", category="path")
    return None


def escape_path(path: str) -> str:
    """A path safe to print and to encode: control characters and undecodable bytes as \\xNN."""
    return "".join(c if 0x20 <= ord(c) != 0x7F and not 0xD800 <= ord(c) <= 0xDFFF else f"\\x{ord(c) & 0xFF:02x}"
                   for c in path)


def mode_finding(path: str, blob: FileBlob) -> Finding | None:
    """Symlinks, submodules and executables outside the folders whose own checks judge them."""
    if path.startswith("memories/") or (path.startswith("skills/") and blob.mode != EXEC):
        return None  # entry.mode and the skill checks say it with more context
    if blob.mode == LINK:
        return Finding("path.symlink", "error", f"symbolic link to {blob.data.decode('utf-8', 'replace')!r}", path=path,
                       hint="store the file itself; a checkout would follow the link", category="path")
    if blob.mode == COMMIT:
        return Finding("path.submodule", "error", "a submodule (gitlink)", path=path,
                       hint="a memory repository holds its own files; remove the submodule", category="path")
    if blob.mode == EXEC and not (path.startswith("skills/") and "/scripts/" in path):
        return Finding("path.executable", "error", "file is executable", path=path,
                       hint="only files under a skill's scripts/ may be executable; chmod -x it (mode 100644)",
                       category="path")
    return None


class EntryParses:
    """Each entry file parsed once per check (the file rules and the caps both need it)."""

    def __init__(self) -> None:
        self._done: dict[str, tuple[Entry, int] | MemrepoError] = {}

    def __call__(self, path: str, data: bytes) -> Entry:
        return self.at(path, data)[0]

    def at(self, path: str, data: bytes) -> tuple[Entry, int]:
        """The entry and the line where its text begins."""
        got = self._done.get(path)
        if got is None:
            try:
                got = parse_entry_at(data, path)
            except MemrepoError as exc:
                got = exc
            self._done[path] = got
        if isinstance(got, MemrepoError):
            raise got
        return got


def entry_file_findings(path: str, blob: FileBlob, policy: Policy, parse: EntryParses | None = None) -> list[Finding]:
    loc = path_scope_id(path)
    if loc is None:
        return [Finding("path.unexpected", "error", "memories/ holds only memories/<scope>/<id>.md files", path=path,
                        hint="move it to memories/<scope>/<id>.md or out of memories/", category="path")]
    if blob.mode != BLOB:
        kind = {LINK: "a symlink", COMMIT: "a submodule", EXEC: "executable"}.get(blob.mode, f"mode {blob.mode:o}")
        return [Finding("entry.mode", "error", f"entry file is {kind}", path=path,
                        hint="entries are plain text files (mode 100644)", category="schema")]
    if len(blob.data) > MAX_FILE_BYTES:
        return [Finding("entry.size", "error", f"entry file is {len(blob.data):,} bytes", path=path,
                        hint="entries are short facts", category="cap")]
    try:
        entry, body_line = (parse or EntryParses()).at(path, blob.data)
    except MemrepoError as exc:
        line = exc.where.rsplit(":", 1)[-1]
        return [Finding("entry.parse", "error", exc.what, path=path, line=int(line) if line.isdigit() else 1,
                        hint=exc.hint, category="schema", entry=loc[1])]
    return entry_findings(entry, policy, path, body_line)


def policy_file_findings(files: Mapping[str, FileBlob], label: str, judging: Policy | None = None) -> list[Finding]:
    """Does the policies/ folder load? (Any error is a finding, never a crash.)"""
    inner = {p[len(POLICY_DIR) + 1:]: b.data for p, b in files.items() if p.startswith(POLICY_DIR + "/")}
    if judging is not None and inner == judging.files:
        return []  # the very files of the policy judging this tree: they loaded already
    try:
        policy = load_policy(inner, source=label)
        policy.scanner()
    except MemrepoError as exc:
        return [Finding("policy.invalid", "error", exc.what, path=exc.where.split(":", 1)[-1] or POLICY_DIR,
                        hint=exc.hint, category="policy")]
    return []


def tree_findings(files: Mapping[str, FileBlob], policy: Policy, only: Iterable[str] | None = None) -> list[Finding]:
    """Check every file (or only the given paths) plus the tree-wide rules (caps, duplicate ids).

    With many entries, forked workers judge the entry files while this process does the
    tree-wide rules; the findings and their order are the same as in one process."""
    targets = set(only) if only is not None else set(files)
    parse = EntryParses()
    ordered = sorted(targets)
    unsafe = {p: bad for p in ordered if (bad := unsafe_path_finding(p))}
    workers = EntryWorkers.start([p for p in ordered if _is_entry_path(p) and p in files and p not in unsafe],
                                 files, policy)
    try:
        tree_wide = _tree_wide_findings(files, policy, only, targets, parse)
        judged = workers.results() if workers is not None else {}
    finally:
        if workers is not None:
            workers.close()
    out: list[Finding] = []
    for path in ordered:
        bad = unsafe.get(path)
        if bad:
            out.append(bad)
            continue
        blob = files.get(path)
        if blob is None:
            continue
        odd = mode_finding(path, blob)
        if odd:
            out.append(odd)
        if _is_entry_path(path):
            got = judged.get(path)
            out.extend(got if got is not None else entry_file_findings(path, blob, policy, parse))
    out.extend(tree_wide)
    return out


def _tree_wide_findings(files: Mapping[str, FileBlob], policy: Policy, only: Iterable[str] | None,
                        targets: set[str], parse: EntryParses) -> list[Finding]:
    out = skill_tree_findings(files, policy, targets)
    if any(p.startswith(POLICY_DIR + "/") for p in targets):
        out.extend(policy_file_findings(files, "change", policy))
    out.extend(case_collision_findings(files))
    # hostile sizes are findings already: keep them out of the tree-wide parses below
    files = {p: b for p, b in files.items() if len(b.data) <= MAX_FILE_BYTES}
    ids = [(loc[1], p) for p in files if (loc := path_scope_id(p))]
    out.extend(f for f in duplicate_id_findings(ids) if only is None or f.path in targets)
    touched_scopes = {loc[0] for p in targets if (loc := path_scope_id(p))}
    # only scopes with a total cap need every entry parsed (and, for a change, only the touched ones):
    # a recall-only scope of 100,000 entries has no cap to sum
    capped = {name for name, spec in policy.scopes.items() if spec.cap and (only is None or name in touched_scopes)}
    by_scope: dict[str, list[str]] = {}
    for p, blob in sorted(files.items()):
        loc = path_scope_id(p)
        if loc and loc[0] in capped and blob.mode == BLOB:
            try:
                by_scope.setdefault(loc[0], []).append(parse(p, blob.data).text)
            except MemrepoError:
                continue
    out.extend(f for f in cap_findings(by_scope, policy) if only is None or f.path.split("/")[1] in touched_scopes)
    out.extend(file_duplicate_findings(files, policy, targets if only is not None else None))  # exact + near duplicates
    return out


def _is_entry_path(path: str) -> bool:
    return path.startswith("memories/") and not path.endswith("/README.md") and path != "memories/README.md"


PARALLEL_MIN = 2000  # entries below which one process is faster than starting workers
_WORK: tuple[list[str], Mapping[str, FileBlob], Policy] | None = None  # what forked workers inherit


def check_jobs() -> int:
    """Worker processes for a large check: ``$MEMREPO_JOBS``, else the usable CPUs (1: no workers)."""
    raw = os.environ.get("MEMREPO_JOBS", "")
    if raw.strip().isdigit() and int(raw) > 0:
        return int(raw)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class EntryWorkers:
    """Entry findings computed by forked workers while the caller goes on. Workers share the policy
    and scanner by fork, so nothing is built twice. Any failure to get workers (limits, a sandbox,
    a platform without fork) means no workers: the caller judges each file itself."""

    def __init__(self, pool: Any, pending: Any) -> None:
        self._pool = pool
        self._pending = pending

    @classmethod
    def start(cls, paths: list[str], files: Mapping[str, FileBlob], policy: Policy) -> EntryWorkers | None:
        jobs = min(check_jobs(), len(paths) // (PARALLEL_MIN // 2) or 1)
        # fork only on Linux: macOS frameworks (and Windows) do not survive it reliably
        if jobs < 2 or len(paths) < PARALLEL_MIN or not sys.platform.startswith("linux"):
            return None
        global _WORK
        from ..detect import rxcache

        policy.scanner()  # built once here, inherited by every worker
        size = -(-len(paths) // (jobs * 16))  # small chunks: the last one leaves a core idle for less time
        chunks = [(i, min(i + size, len(paths))) for i in range(0, len(paths), size)]
        _WORK = (paths, files, policy)
        try:
            # the workers fork here, holding _WORK; each forgets the regex code this process has yet to write
            pool = multiprocessing.get_context("fork").Pool(jobs, initializer=rxcache.take_new)
        except (OSError, multiprocessing.ProcessError):
            return None
        finally:
            _WORK = None
        return cls(pool, pool.map_async(_judge_chunk, chunks, chunksize=1))

    def results(self) -> dict[str, list[Finding]]:
        try:
            chunks = self._pending.get()
        except (OSError, multiprocessing.ProcessError):
            return {}  # the caller judges whatever is missing
        from ..detect import rxcache

        for _, code in chunks:
            rxcache.adopt(code)  # regex code the workers generated, kept for the next process
        return {p: f for found, _ in chunks for p, f in found.items()}

    def close(self) -> None:
        self._pool.terminate()
        self._pool.join()


def _judge_chunk(span: tuple[int, int]) -> tuple[dict[str, list[Finding]], dict[bytes, tuple[int, int, Any]]]:
    """A chunk's findings, and the regex code the worker generated for them (see rxcache.take_new)."""
    assert _WORK is not None
    paths, files, policy = _WORK
    parse = EntryParses()
    found = {p: entry_file_findings(p, files[p], policy, parse) for p in paths[span[0]: span[1]]}
    from ..detect import rxcache

    return found, rxcache.take_new()


def case_collision_findings(files: Mapping[str, FileBlob]) -> list[Finding]:
    """Paths (or folders) that differ only by case, and case variants of memrepo's own folders.

    On a case-insensitive file system (macOS, Windows) they land in one place: ``Memories/x.md``
    would sit beside the entries without being judged as one.
    """
    seen: dict[str, str] = {}
    out = []
    reported: set[str] = set()
    for p in sorted(files):
        parts = p.split("/")
        top = parts[0]
        if len(parts) > 1 and top.casefold() in RESERVED_TOP and top not in RESERVED_TOP and top not in reported:
            reported.update((top, top.casefold()))
            out.append(Finding("path.case-collision", "error", f"folder {top!r} differs from {top.casefold()!r} only by case",
                               path=p, hint=f"use {top.casefold()}/; case-insensitive file systems merge the two",
                               category="path"))
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            key = prefix.casefold()
            other = seen.setdefault(key, prefix)
            if other != prefix and prefix not in reported:
                reported.add(prefix)
                what = "folder" if i < len(parts) else "path"
                out.append(Finding("path.case-collision", "error", f"{what} {prefix!r} differs from {other!r} only by case",
                                   path=p, hint="rename one: case-insensitive file systems cannot hold both", category="path"))
                break
    return out


def skill_tree_findings(files: Mapping[str, FileBlob], policy: Policy, targets: set[str]) -> list[Finding]:
    """Structure and security findings for each skill folder that has a touched file."""
    if not any(p.startswith("skills/") for p in targets):
        return []  # nothing to judge: the skill model (and YAML) need not even be imported
    from .skillcheck import skill_folder_findings

    return skill_folder_findings(files, policy, targets)


__all__ = [
    "case_collision_findings",
    "entry_file_findings",
    "mode_finding",
    "policy_file_findings",
    "tree_findings",
    "unsafe_path_finding",
]
