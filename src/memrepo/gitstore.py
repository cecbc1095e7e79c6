"""Git plumbing (pygit2): read trees at a ref, write commits straight to the object database.

No working tree or on-disk index is needed: a commit is built by rewriting only the tree
objects along the touched paths. Branch updates are compare-and-swap under libgit2's ref
lock, serialised between memrepo processes by an advisory lock, and retried when the ref
moved under us, so concurrent writers never lose or overwrite each other's writes.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import pygit2

from .errors import Conflict, NotARepository, NotFound, ParseError, UsageError

BLOB = pygit2.GIT_FILEMODE_BLOB
EXEC = pygit2.GIT_FILEMODE_BLOB_EXECUTABLE
LINK = pygit2.GIT_FILEMODE_LINK
TREE = pygit2.GIT_FILEMODE_TREE
COMMIT = pygit2.GIT_FILEMODE_COMMIT

NEWEST_FIRST = pygit2.enums.SortMode.TOPOLOGICAL | pygit2.enums.SortMode.TIME  # history walks

LOCK_WAIT_SECONDS = 30.0
CAS_RETRIES = 50
CONFIG_FSYNC = "memrepo.fsync"

# libgit2's fsync switch is process-wide: once any repository opened here asks for durable
# writes, every later write of this process is fsynced too (more durable, never less).
_fsync_enabled = False


def enable_fsync() -> None:
    """fsync objects, refs and their folders on every libgit2 write of this process (sticky)."""
    global _fsync_enabled
    if not _fsync_enabled:
        pygit2.settings.enable_fsync_gitdir(True)
        _fsync_enabled = True


def fsync_enabled() -> bool:
    return _fsync_enabled


@dataclass(frozen=True)
class FileBlob:
    """A file as stored in a tree: git mode and content (a symlink's content is its target)."""

    mode: int
    data: bytes


# A change maps a path to new bytes, to a FileBlob (mode given), or to None (delete).
Change = Mapping[str, "bytes | FileBlob | None"]


@dataclass
class Snapshot:
    """A read-only view of one commit's tree (or of nothing, for a branch not yet born)."""

    store: Store
    commit: pygit2.Oid | None
    tree: pygit2.Tree | None

    def read(self, path: str) -> bytes | None:
        obj = self._lookup(path)
        return obj.data if isinstance(obj, pygit2.Blob) else None

    def mode(self, path: str) -> int | None:
        item = self._entry(path)
        return item.filemode if item is not None else None

    def _dir(self, folder: str) -> pygit2.Tree | None:
        """A folder's tree object, parsed once per snapshot (big folders are costly to re-parse)."""
        if self.tree is None:
            return None
        if not folder:
            return self.tree
        cache = self.__dict__.setdefault("_dirs", {})
        if folder not in cache:
            parent, _, name = folder.rpartition("/")
            ptree = self._dir(parent)
            found = None
            if ptree is not None and name in ptree:
                item = ptree[name]
                if item.filemode == TREE:
                    found = self.store.repo[item.id]
            cache[folder] = found
        return cache[folder]  # type: ignore[no-any-return]

    def _entry(self, path: str) -> pygit2.Object | None:
        folder, _, name = path.rpartition("/")
        tree = self._dir(folder)
        if tree is None or not name or name not in tree:
            return None
        return tree[name]

    def blob_id(self, path: str) -> str | None:
        obj = self._lookup(path)
        return str(obj.id) if isinstance(obj, pygit2.Blob) else None

    def _lookup(self, path: str) -> pygit2.Object | None:
        return self._entry(path) if path else None

    def oid(self, path: str) -> pygit2.Oid | None:
        item = self._entry(path)
        return item.id if item is not None else None

    def walk(self, prefix: str = "") -> Iterator[tuple[str, pygit2.Oid, int]]:
        """Yield (path, oid, mode) for every non-tree entry under ``prefix`` (a folder path)."""
        if self.tree is None:
            return
        tree: pygit2.Tree = self.tree
        if prefix:
            obj = self._lookup(prefix.rstrip("/"))
            if not isinstance(obj, pygit2.Tree):
                return
            tree = obj
        base = prefix.rstrip("/") + "/" if prefix else ""
        stack: list[tuple[str, pygit2.Tree]] = [(base, tree)]
        while stack:
            root, t = stack.pop()
            for item in t:
                path = root + str(item.name)
                if item.filemode == TREE:
                    stack.append((path + "/", self.store.object_at(item.id, path)))  # type: ignore[arg-type]
                else:
                    yield path, item.id, item.filemode

    def files(self, prefix: str = "") -> dict[str, FileBlob]:
        out: dict[str, FileBlob] = {}
        read = self.store.repo.odb.read  # raw object data: twice as fast as building Blob objects
        for path, oid, mode in self.walk(prefix):
            if mode == COMMIT:
                out[path] = FileBlob(mode, b"")
                continue
            try:
                out[path] = FileBlob(mode, read(oid)[1])
            except (KeyError, ValueError, pygit2.GitError) as exc:
                raise _unreadable(path, exc) from None
        return out



@dataclass
class Commit:
    """What a transaction's build step asks to commit."""

    changes: Change
    message: str
    trailers: list[tuple[str, str]] = field(default_factory=list)
    extra_parents: list[pygit2.Oid] = field(default_factory=list)
    result: object = None  # carried back to the caller of transact()


def format_message(subject: str, body: str, trailers: list[tuple[str, str]]) -> str:
    msg = subject.strip().replace("\n", " ")
    if body.strip():
        msg += "\n\n" + body.strip()
    if trailers:
        msg += "\n\n" + "\n".join(f"{k}: {_trailer_value(v)}" for k, v in trailers)
    return msg + "\n"


def _trailer_value(value: str) -> str:
    return " ".join(str(value).split())


def parse_trailers(message: str) -> dict[str, list[str]]:
    """Trailers of the last paragraph ("Key: value" lines)."""
    paragraphs = message.strip().split("\n\n")
    out: dict[str, list[str]] = {}
    if len(paragraphs) < 2:
        return out
    for line in paragraphs[-1].splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            out.setdefault(key, []).append(value.strip())
    return out


class Store:
    """One git repository (bare or not) opened through pygit2."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo = repo
        self.fsync_by_policy = False  # set by the policy layer (durability.fsync on verified)
        self._held: set[str] = set()  # ref names whose memrepo branch lock this Store holds
        if self.fsync_by_config():
            enable_fsync()

    # -- durability --------------------------------------------------------------------------
    def fsync_by_config(self) -> bool | None:
        """git config ``memrepo.fsync`` (per machine); None when unset or not a boolean."""
        try:
            return bool(self.repo.config.get_bool(CONFIG_FSYNC))
        except (KeyError, ValueError, pygit2.GitError):
            return None

    @property
    def durable(self) -> bool:
        """fsync on write? git config memrepo.fsync wins; else the policy's durability.fsync; default off."""
        by_config = self.fsync_by_config()
        return by_config if by_config is not None else self.fsync_by_policy

    def _apply_durability(self) -> None:
        if self.durable:
            enable_fsync()

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Store:
        p = Path(path)
        if not p.exists():
            raise NotARepository(f"no such directory: {p}", where=str(p), hint="check the -C path")
        try:
            found = pygit2.discover_repository(str(p))
        except pygit2.GitError:
            found = None
        if not found:
            raise NotARepository("not a git repository", where=str(p), hint="run `memrepo init PATH` first")
        return cls(pygit2.Repository(found))

    @classmethod
    def init(cls, path: str | os.PathLike[str], *, bare: bool = False, initial_head: str = "verified") -> Store:
        repo = pygit2.init_repository(str(path), bare=bare, initial_head=initial_head)
        return cls(repo)

    @property
    def bare(self) -> bool:
        return bool(self.repo.is_bare)

    @property
    def git_dir(self) -> Path:
        return Path(self.repo.path)

    @property
    def workdir(self) -> Path | None:
        return Path(self.repo.workdir) if self.repo.workdir else None

    def private_dir(self, *parts: str) -> Path:
        """memrepo's own scratch space inside the git dir (locks, caches); never pushed."""
        d = self.git_dir.joinpath("memrepo", *parts)
        d.mkdir(parents=True, exist_ok=True)
        return d

    # -- reading ---------------------------------------------------------------------------
    @staticmethod
    def refname(branch: str) -> str:
        return branch if branch.startswith("refs/") else f"refs/heads/{branch}"

    def tip(self, branch: str) -> pygit2.Oid | None:
        try:
            ref = self.repo.references.get(self.refname(branch))
        except (pygit2.GitError, ValueError) as exc:
            raise Conflict(f"cannot read ref: {exc}", where=self.refname(branch),
                           hint="run `memrepo doctor` to inspect the repository") from None
        if ref is None:
            return None
        return ref.resolve().target  # type: ignore[return-value]

    def require_tip(self, branch: str) -> pygit2.Oid:
        oid = self.tip(branch)
        if oid is None:
            raise NotFound(f"branch {branch!r} does not exist", where=self.refname(branch),
                           hint="run `memrepo init` in this repository, or `memrepo sync` to fetch it")
        return oid

    def snapshot(self, rev: str | pygit2.Oid | None) -> Snapshot:
        """A snapshot of a branch name, ref, commit id or revision expression (None = empty)."""
        if rev is None:
            return Snapshot(self, None, None)
        if isinstance(rev, pygit2.Oid):
            commit = self.repo[rev]
        else:
            oid = self.tip(rev) if not rev.startswith("refs/") or self.repo.references.get(rev) else None
            if oid is None:
                try:
                    commit = self.repo.revparse_single(rev)
                except (KeyError, pygit2.GitError, ValueError):
                    raise NotFound(f"unknown revision {rev!r}", where=rev,
                                   hint="name a branch (verified, provisional), a ref or a commit id") from None
            else:
                commit = self.repo[oid]
        try:
            peeled = commit.peel(pygit2.Commit)
            return Snapshot(self, peeled.id, peeled.tree)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise _unreadable(str(rev), exc) from None

    def object_at(self, oid: pygit2.Oid, path: str) -> pygit2.Object:
        """The object at ``path`` of a tree being read; a clear error if it is missing or malformed."""
        try:
            return self.repo[oid]
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise _unreadable(path, exc) from None

    def branch_snapshot(self, branch: str) -> Snapshot:
        tip = self.tip(branch)
        return self.snapshot(tip) if tip is not None else Snapshot(self, None, None)

    # -- writing ---------------------------------------------------------------------------
    def write_tree(self, base: pygit2.Tree | None, changes: Change) -> pygit2.Oid:
        """Return the id of ``base`` with ``changes`` applied; only touched subtrees are rewritten."""
        nested: dict[str, object] = {}
        for path, value in changes.items():
            parts = path.split("/")
            node = nested
            for part in parts[:-1]:
                node = node.setdefault(part, {})  # type: ignore[assignment]
                if not isinstance(node, dict):
                    raise UsageError("a parent folder is also written as a file", where=path,
                                     hint="write either the file or files under a folder of that name, not both")
            node[parts[-1]] = value
        oid = self._write_level(base, nested)
        return oid if oid is not None else self.repo.TreeBuilder().write()

    def _write_level(self, tree: pygit2.Tree | None, nested: dict[str, object]) -> pygit2.Oid | None:
        builder = self.repo.TreeBuilder(tree) if tree is not None else self.repo.TreeBuilder()
        for name, value in nested.items():
            if isinstance(value, dict):
                sub = None
                if tree is not None and name in tree and tree[name].filemode == TREE:
                    sub = cast(pygit2.Tree, self.repo[tree[name].id])
                oid = self._write_level(sub, value)
                if oid is None:
                    if builder.get(name) is not None:
                        builder.remove(name)
                else:
                    builder.insert(name, oid, TREE)
            elif value is None:
                if builder.get(name) is not None:
                    builder.remove(name)
            else:
                blob = value if isinstance(value, FileBlob) else FileBlob(BLOB, value)  # type: ignore[arg-type]
                builder.insert(name, self.repo.create_blob(blob.data), blob.mode)
        if len(builder) == 0:
            return None
        return builder.write()

    def signature(self, name: str | None = None, email: str | None = None) -> pygit2.Signature:
        if name is None or email is None:
            try:
                default = self.repo.default_signature
                name = name or default.name
                email = email or default.email
            except (KeyError, pygit2.GitError):
                name, email = name or "memrepo", email or "memrepo@localhost"
        return pygit2.Signature(name, email)

    def create_commit(self, parents: list[pygit2.Oid], tree: pygit2.Oid, message: str,
                      author: pygit2.Signature | None = None) -> pygit2.Oid:
        author = author or self.signature()
        return self.repo.create_commit(None, author, self.signature(), message, tree, parents)

    @contextlib.contextmanager
    def branch_lock(self, branch: str, wait: float = LOCK_WAIT_SECONDS) -> Iterator[None]:
        """An advisory lock per branch between memrepo processes (released by the OS if we die)."""
        name = self.refname(branch)
        path = self.lock_dir() / (name.replace("/", "%") + ".flock")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + wait
        held = False
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                        raise Conflict(f"another memrepo process holds the lock for {branch!r}",
                                       where=str(path), hint="wait for it to finish, then retry") from None
                    time.sleep(0.002)
            held = name not in self._held
            self._held.add(name)
            yield
        finally:
            if held:
                self._held.discard(name)
            os.close(fd)

    def lock_dir(self) -> Path:
        return self.private_dir("locks")

    def _intent_path(self, name: str) -> Path:
        return self.lock_dir() / (name.replace("/", "%") + ".intent")

    def _write_intent(self, name: str, new: pygit2.Oid) -> Path:
        """Record, before taking git's ref lock, who is about to update ``name`` and to what.

        If this process is killed while holding ``<ref>.lock``, the record proves the lock stale
        (see :func:`inspect_ref_lock`), so the next writer or ``memrepo doctor`` can clear it.
        """
        path = self._intent_path(name)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(fd, f"{os.getpid()} {new}\n".encode())
        finally:
            os.close(fd)
        return path

    def _clear_lock_left_by_dead_writer(self, name: str) -> bool:
        """Under our branch lock, remove ``<ref>.lock`` if a killed memrepo writer provably left it."""
        info = inspect_ref_lock(self, name, own_flock=True)
        if info is None or not info.proven_by_intent:
            return False
        with contextlib.suppress(FileNotFoundError):
            info.lock.unlink()
        return True

    def cas_ref(self, branch: str, new: pygit2.Oid, expected: pygit2.Oid | None, message: str) -> bool:
        """Set ``branch`` to ``new`` only if it still points at ``expected``; False if it moved."""
        name = self.refname(branch)
        lockfile = self.git_dir / (name + ".lock")
        self._apply_durability()
        if name in self._held and lockfile.exists():
            self._clear_lock_left_by_dead_writer(name)
        intent = self._write_intent(name, new)
        try:
            return self._cas_ref_locked(name, lockfile, new, expected, message)
        finally:
            with contextlib.suppress(OSError):
                intent.unlink()

    def _cas_ref_locked(self, name: str, lockfile: Path, new: pygit2.Oid, expected: pygit2.Oid | None,
                        message: str) -> bool:
        for attempt in range(200):
            try:
                with self.repo.transaction() as txn:
                    txn.lock_ref(name)
                    ref = self.repo.references.get(name)
                    current = ref.target if ref is not None else None
                    if current != expected:
                        raise _Moved()
                    txn.set_target(name, new, message=message)
                return True
            except _Moved:
                return False
            except pygit2.GitError as exc:
                if "lock" not in str(exc).lower() and not lockfile.exists():
                    raise Conflict(f"cannot update {name}: {exc}", where=name,
                                   hint="run `memrepo doctor` to inspect the repository") from None
                if attempt == 199:
                    raise Conflict(f"{name} is locked by another process ({lockfile.name} exists)", where=str(lockfile),
                                   hint="if no git or memrepo process is running, run `memrepo doctor --fix` to clear a stale lock") from None
                time.sleep(0.005)
        return False

    def transact(self, branch: str, build: Callable[[Snapshot], Commit | None], *,
                 author: pygit2.Signature | None = None, retries: int = CAS_RETRIES) -> tuple[pygit2.Oid | None, Commit | None]:
        """Build a commit from the branch's current tip and compare-and-swap it in, retrying on races.

        ``build`` sees a fresh snapshot each attempt (so checks such as caps are re-run on the
        real parent) and returns a Commit, or None for a no-op. Returns (new commit id, Commit).
        """
        self._apply_durability()
        with self.branch_lock(branch):
            for _ in range(retries):
                snap = self.branch_snapshot(branch)
                spec = build(snap)
                if spec is None:
                    return None, None
                tree = self.write_tree(snap.tree, spec.changes)
                parents = ([snap.commit] if snap.commit is not None else []) + list(spec.extra_parents)
                oid = self.create_commit(parents, tree, spec.message, author)
                self._check_checkout_clean(branch, snap, spec.changes)
                if self.cas_ref(branch, oid, snap.commit, message=spec.message.splitlines()[0]):
                    self._sync_checkout(branch, snap, spec.changes)
                    return oid, spec
            raise Conflict(f"branch {branch!r} kept moving under us ({retries} attempts)", where=self.refname(branch),
                           hint="another writer is very busy; retry the command")

    def set_ref(self, branch: str, new: pygit2.Oid, expected: pygit2.Oid | None, message: str) -> None:
        """Move a branch with compare-and-swap (Conflict if it moved meanwhile)."""
        with self.branch_lock(branch):
            snap = self.branch_snapshot(branch)
            if snap.commit != expected:
                raise Conflict(f"branch {branch!r} moved while we worked", where=self.refname(branch),
                               hint="run the command again")
            self._check_checkout_clean(branch, snap, self._diff_paths(snap, new))
            if not self.cas_ref(branch, new, expected, message):
                raise Conflict(f"branch {branch!r} moved while we worked", where=self.refname(branch),
                               hint="run the command again")
            self._sync_checkout(branch, snap, self._diff_paths(snap, new))

    def _diff_paths(self, snap: Snapshot, new: pygit2.Oid) -> dict[str, bytes | FileBlob | None]:
        after = self.snapshot(new)
        changes: dict[str, bytes | FileBlob | None] = {}
        if snap.tree is None:
            return {p: FileBlob(m, self.repo[o].read_raw()) for p, o, m in after.walk()}
        for patch_delta in snap.tree.diff_to_tree(cast(pygit2.Tree, after.tree)).deltas:
            path = patch_delta.new_file.path
            if patch_delta.status == pygit2.GIT_DELTA_DELETED:
                changes[patch_delta.old_file.path] = None
            else:
                changes[path] = FileBlob(patch_delta.new_file.mode, self.repo[patch_delta.new_file.id].read_raw())
                if patch_delta.old_file.path != path:
                    changes[patch_delta.old_file.path] = None
        return changes

    # -- keeping a checked-out branch consistent ---------------------------------------------
    def _checked_out(self, branch: str) -> bool:
        if self.bare or self.repo.head_is_detached:
            return False
        try:
            return self.repo.references["HEAD"].target == self.refname(branch)
        except (KeyError, pygit2.GitError):
            return False

    def _check_checkout_clean(self, branch: str, snap: Snapshot, changes: Change) -> None:
        """Refuse to write a checked-out path the user has modified in the working tree."""
        if not self._checked_out(branch):
            return
        workdir = self.workdir
        assert workdir is not None
        for path in changes:
            on_disk = workdir / path
            committed = snap.read(path)
            disk = on_disk.read_bytes() if on_disk.is_file() and not on_disk.is_symlink() else None
            if disk != committed and not (disk is None and committed is None):
                raise Conflict("uncommitted change in the working tree would be overwritten", where=path,
                               hint=f"commit or discard your change to {path}, then retry")

    def _sync_checkout(self, branch: str, before: Snapshot, changes: Change) -> None:
        """The checked-out branch moved: update the touched files and their index entries too."""
        if not self._checked_out(branch):
            return
        workdir = self.workdir
        assert workdir is not None
        index = self.repo.index
        index.read()
        for path, value in changes.items():
            target = workdir / path
            if value is None:
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
                with contextlib.suppress(KeyError, OSError, pygit2.GitError):
                    index.remove(path)
                continue
            blob = value if isinstance(value, FileBlob) else FileBlob(BLOB, value)
            target.parent.mkdir(parents=True, exist_ok=True)
            if blob.mode == LINK:
                with contextlib.suppress(FileNotFoundError):
                    target.unlink()
                os.symlink(blob.data.decode("utf-8", "surrogateescape"), target)
            else:
                tmp = target.with_name(f".{target.name}.memrepo-tmp")
                tmp.write_bytes(blob.data)
                os.chmod(tmp, 0o755 if blob.mode == EXEC else 0o644)
                os.replace(tmp, target)
            index.add(path)
        index.write()


class _Moved(Exception):
    pass


def _unreadable(where: str, exc: BaseException) -> ParseError:
    return ParseError(f"git object cannot be read: {exc}", where=where,
                      hint="the tree was not written by git (empty, '/' or NUL in a name?) or an object is missing; "
                           "rewrite the commit with git, or run `git fsck`")


# -- locks left behind by killed processes ---------------------------------------------------
STALE_AFTER_SECONDS = 10.0


@dataclass
class RefLock:
    """What is known about a ``<ref>.lock`` file: who could hold it, and whether it is proven stale."""

    lock: Path
    age_seconds: float
    holder_alive: bool  # a memrepo process holds this branch's lock (flock; released by the OS on death)
    open_by: list[int]  # processes that have the lock file open (libgit2 keeps it open while it holds it)
    intent_pid: int | None  # the memrepo writer that recorded it was about to take this lock
    intent_pid_alive: bool
    proven_by_intent: bool  # left by a memrepo writer that is dead: content and time match its record

    @property
    def stale(self) -> bool:
        """Proven stale: nobody holds or has it open, and either a dead memrepo writer left it or it is old."""
        if self.holder_alive or self.open_by:
            return False
        return self.proven_by_intent or self.age_seconds >= STALE_AFTER_SECONDS

    @property
    def reason(self) -> str:
        if self.holder_alive:
            return "a running memrepo process holds this branch; wait for it"
        if self.open_by:
            return f"process {', '.join(map(str, self.open_by))} has it open; wait for it"
        if self.proven_by_intent:
            return (f"left by memrepo process {self.intent_pid}, killed while updating the ref "
                    "(no process has it open; its content matches the update that process started)")
        if self.age_seconds >= STALE_AFTER_SECONDS:
            return f"no process has it open and it is {self.age_seconds:.0f}s old (a git ref update takes milliseconds)"
        return "recent and not provably memrepo's: a git process may still be writing; check again in a few seconds"


def inspect_ref_lock(store: Store, name: str, *, own_flock: bool = False) -> RefLock | None:
    """Inspect ``<git dir>/<name>.lock`` (None if absent). ``own_flock``: the caller holds the branch lock."""
    lock = store.git_dir / (name + ".lock")
    try:
        st = lock.stat()
    except FileNotFoundError:
        return None
    holder = False if own_flock else _flock_held(store.lock_dir() / (name.replace("/", "%") + ".flock"))
    open_by = processes_with_open(lock)
    pid, new, intent_mtime = _read_intent(store._intent_path(name))
    pid_alive = pid is not None and pid != os.getpid() and pid_alive_(pid)
    proven = False
    if pid is not None and pid != os.getpid() and not pid_alive and not holder and not open_by:
        try:
            content = lock.read_bytes().strip()
        except OSError:
            content = b"?"
        proven = content in (b"", (new or "").encode()) and st.st_mtime >= intent_mtime - 0.001
    return RefLock(lock, round(max(0.0, time.time() - st.st_mtime), 1), holder, open_by, pid, pid_alive, proven)


def _read_intent(path: Path) -> tuple[int | None, str | None, float]:
    try:
        raw = path.read_text("ascii")
        mtime = path.stat().st_mtime
        pid_s, new = raw.split()
        return int(pid_s), new, mtime
    except (OSError, ValueError, UnicodeDecodeError):
        return None, None, 0.0


def _flock_held(path: Path) -> bool:
    """Does some process hold this flock? (The OS drops it when its holder dies.)"""
    try:
        fd = os.open(path, os.O_RDWR)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except OSError as exc:
        return exc.errno in (errno.EAGAIN, errno.EACCES)
    finally:
        os.close(fd)


def pid_alive_(pid: int) -> bool:
    """Is ``pid`` a running process (a zombie counts as dead)?"""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def processes_with_open(path: Path) -> list[int]:
    """Pids that have ``path`` open, from /proc (Linux; elsewhere, and for processes we may not inspect, unknown)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return []
    target = str(path.resolve())
    out = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fds = os.listdir(entry / "fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(entry / "fd" / fd) == target:
                    out.append(int(entry.name))
                    break
            except OSError:
                continue
    return out
