"""Real git repositories in temp dirs, a pinned identity and a clean git environment."""
from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"

# A clean, pinned git environment for the whole run, set before pygit2 reads any config.
for _key in list(os.environ):
    if _key.startswith("GIT_") or _key.startswith("MEMREPO_"):
        del os.environ[_key]
_HOME = Path(tempfile.mkdtemp(prefix="memrepo-home-"))
(_HOME / ".gitconfig").write_text(
    "[user]\n\tname = Test Agent\n\temail = agent@example.test\n[init]\n\tdefaultBranch = main\n"
    "[protocol \"file\"]\n\tallow = always\n", encoding="utf-8")
os.environ.update({
    "HOME": str(_HOME), "XDG_CONFIG_HOME": str(_HOME / ".config"), "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_DATE": "", "PRE_COMMIT_HOME": str(_HOME / ".cache" / "pre-commit"),
})
del os.environ["GIT_AUTHOR_DATE"]

import pygit2  # noqa: E402

pygit2.settings.search_path[pygit2.GIT_CONFIG_LEVEL_GLOBAL] = str(_HOME)
pygit2.settings.search_path[pygit2.GIT_CONFIG_LEVEL_SYSTEM] = ""
pygit2.settings.search_path[pygit2.GIT_CONFIG_LEVEL_XDG] = str(_HOME / ".config")

from memrepo.cli.main import main as cli_main  # noqa: E402


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A fresh memory repository (non-bare clone-like layout)."""
    from memrepo.verbs.init import init

    path = tmp_path / "mem"
    init(path)
    return path


@pytest.fixture
def bare_repo(tmp_path: Path) -> Path:
    from memrepo.verbs.init import init

    path = tmp_path / "mem.git"
    init(path, bare=True)
    return path


@pytest.fixture
def run(capsys: pytest.CaptureFixture[str]) -> Callable[..., Any]:
    """Run the CLI in-process: run(*argv) -> (exit code, stdout, stderr); json=True parses stdout."""
    import json

    def _run(*argv: str, json_out: bool = False) -> Any:
        capsys.readouterr()
        code = cli_main([str(a) for a in argv])
        out, err = capsys.readouterr()
        if json_out:
            return code, json.loads(out), err
        return code, out, err

    return _run


def python_cmd() -> list[str]:
    return [sys.executable, "-m", "memrepo"]


def git_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    return env


def fresh_regex_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """memrepo.detect.rxcache as a new process finds it: no file read yet, nothing compiled, nothing remembered."""
    from memrepo.detect import rxcache

    for name, value in (("_table", None), ("_code", b""), ("_new", {}), ("_usable", True)):
        monkeypatch.setattr(rxcache, name, value)
    rxcache.compile_cached.cache_clear()
