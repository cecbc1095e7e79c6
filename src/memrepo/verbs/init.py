"""init: create a memory repository (or adopt an empty one)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import pygit2

from ..errors import MemrepoError
from ..gitstore import FileBlob, Store, format_message
from ..policy.config import POLICY_DIR, load_policy
from ..repo import CONFIG_PROVISIONAL, CONFIG_VERIFIED
from ..resources import default_policy_files


@dataclass
class InitResult:
    path: str
    bare: bool
    verified: str
    provisional: str
    commit: str
    created: bool

    def to_json(self) -> dict[str, object]:
        return self.__dict__.copy()


def template(name: str) -> bytes:
    return resources.files("memrepo.templates").joinpath(name).read_bytes()


PRE_COMMIT_HEADER = """\
# memrepo's checks on every commit: a convenience (it can be skipped with --no-verify);
# CI and the server hook are the trust boundary. Install once per clone: pre-commit install
"""


def pre_commit_config(hooks_repo: str | None = None, hooks_rev: str | None = None) -> bytes:
    """The .pre-commit-config.yaml init writes, from this project's .pre-commit-hooks.yaml (one source).

    By default the hooks are written as ``repo: local`` copies (language: system, so they run
    the memrepo on PATH, offline, with no code fetched from anywhere); with ``hooks_repo`` and
    ``hooks_rev`` they point at that repository of memrepo's hooks instead.
    """
    import yaml

    from ..resources import hooks_manifest

    manifest = yaml.safe_load(hooks_manifest())
    if hooks_repo:
        repos = [{"repo": hooks_repo, "rev": hooks_rev or "HEAD", "hooks": [{"id": h["id"]} for h in manifest]}]
        note = "# Needs `memrepo` on PATH.\n"
    else:
        repos = [{"repo": "local", "hooks": [{k: v for k, v in h.items() if k != "description"} for h in manifest]}]
        note = "# Local copies of memrepo's hooks (`memrepo init --hooks-repo URL --hooks-rev REV` to use a repository).\n"
    return (PRE_COMMIT_HEADER + note + yaml.safe_dump({"repos": repos}, sort_keys=False)).encode("utf-8")


def layout_files(hooks_repo: str | None = None, hooks_rev: str | None = None) -> dict[str, bytes]:
    """Everything the first commit on verified holds."""
    files = {f"{POLICY_DIR}/{k}": v for k, v in default_policy_files().items()}
    files[".pre-commit-config.yaml"] = pre_commit_config(hooks_repo, hooks_rev)
    files[".github/workflows/memrepo.yml"] = template("workflow.yml")
    files["README.md"] = template("README.md")
    files["memories/README.md"] = template("memories-README.md")
    files["skills/README.md"] = template("skills-README.md")
    return files


def init(path: str | os.PathLike[str], *, bare: bool = False, hooks_repo: str | None = None,
         hooks_rev: str | None = None) -> InitResult:
    """Create a memory repository at ``path`` with verified and provisional branches."""
    target = Path(path)
    existing = None
    if target.exists():
        try:
            found = pygit2.discover_repository(str(target))
        except pygit2.GitError:
            found = None
        if found and Path(found).resolve() in (target.resolve() / ".git", target.resolve()):
            existing = pygit2.Repository(found)
        elif target.is_dir() and any(target.iterdir()):
            raise MemrepoError("directory is not empty and is not a git repository", where=str(target),
                               hint="choose an empty or new directory, or run `git init` there first")
    if existing is not None:
        store = Store(existing)
        return _adopt(store, target, hooks_repo, hooks_rev)
    store = Store.init(target, bare=bare, initial_head="verified")
    return _create(store, target, hooks_repo, hooks_rev)


def _adopt(store: Store, target: Path, hooks_repo: str | None, hooks_rev: str | None) -> InitResult:
    verified = _config(store, CONFIG_VERIFIED, "verified")
    tip = store.tip(verified)
    if tip is not None and store.snapshot(tip).read(f"{POLICY_DIR}/policy.yaml") is not None:
        prov = _config(store, CONFIG_PROVISIONAL, "provisional")
        if store.tip(prov) is None:
            store.cas_ref(prov, tip, None, "memrepo init: provisional")
        return InitResult(str(target), store.bare, verified, prov, str(tip), created=False)
    if list(store.repo.references) or (store.workdir and any(p.name != ".git" for p in store.workdir.iterdir())):
        raise MemrepoError("repository is not empty and is not a memory repository", where=str(target),
                           hint="run `memrepo init` in a new or empty repository (or an existing memory repository)")
    if not store.bare:
        store.repo.set_head("refs/heads/verified")
    return _create(store, target, hooks_repo, hooks_rev)


def _config(store: Store, key: str, default: str) -> str:
    try:
        return str(store.repo.config[key])
    except (KeyError, pygit2.GitError):
        return default


def _create(store: Store, target: Path, hooks_repo: str | None = None, hooks_rev: str | None = None) -> InitResult:
    policy = load_policy(default_policy_files())
    verified, provisional = policy.verified_branch, policy.provisional_branch
    store.repo.config[CONFIG_VERIFIED] = verified
    store.repo.config[CONFIG_PROVISIONAL] = provisional
    files = {p: FileBlob(0o100644, data) for p, data in layout_files(hooks_repo, hooks_rev).items()}
    tree = store.write_tree(None, files)
    message = format_message("memrepo init", "Layout, default policies, hooks and CI gate.",
                             [("Memrepo-Op", "init")])
    oid = store.create_commit([], tree, message)
    store.cas_ref(verified, oid, None, "memrepo init")
    store.cas_ref(provisional, oid, None, "memrepo init")
    if not store.bare:
        store.repo.set_head(store.refname(verified))
        store.repo.checkout(store.refname(verified), strategy=pygit2.GIT_CHECKOUT_FORCE)
    return InitResult(str(target), store.bare, verified, provisional, str(oid), created=True)
