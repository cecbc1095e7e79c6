"""A real `git daemon` on 127.0.0.1 (free port, receive-pack enabled) and git CLI helpers with a clean env."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    env["GIT_TERMINAL_PROMPT"] = "0"
    env.update(extra)
    return env


def git(cwd: Path, *args: str, check: bool = True, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(["git", *args], cwd=cwd, env=env or clean_env(), capture_output=True, text=True, timeout=60, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def server_env() -> dict[str, str]:
    """The server's environment: memrepo installed (this interpreter's scripts on PATH)."""
    scripts = os.path.dirname(sys.executable)
    return clean_env(PATH=scripts + os.pathsep + os.environ.get("PATH", ""))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """Serve every repository under ``base``; yields the URL prefix ``git://127.0.0.1:PORT``."""
    for _ in range(5):
        port = free_port()
        proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack", "--informative-errors",
             f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base)],
            env=server_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.02)
        if proc.poll() is None:
            break
    else:
        raise RuntimeError("git daemon did not start")
    try:
        yield f"git://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


def entry_text(eid: str, text: str, *, origin: str = "verified_manual", verification: str = "verified",
               source_type: str = "user") -> str:
    return (f"---\nid: {eid}\nkind: fact\ntype: note\nsource_type: {source_type}\nverification: {verification}\n"
            f"ttl: permanent\ntags: []\nupdated: '2026-11-29'\nver: 1\norigin: {origin}\n---\n{text}\n")
