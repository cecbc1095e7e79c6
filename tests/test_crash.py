"""Crash safety: writers killed with SIGKILL at random points lose no acknowledged write and corrupt nothing.

Writers are forked from one warmed-up spawner process (the policy's scanner is compiled once),
so a kill costs milliseconds and a run can afford many. The spawner, not the test, sends the
SIGKILL and reaps the child at once, so a pid is never reused under us. After the kills:
``git fsck --strict`` is clean, every acknowledged (printed) write is on the branch, every ref
points at a commit, ``memrepo doctor`` explains any ref lock a kill left and ``--fix`` clears it
only when proven stale, and the next write succeeds.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pygit2
import pytest
from conftest import git_env, python_cmd

SPAWNER = r"""
import os, signal, sys
from memrepo.repo import MemRepo
from memrepo.verbs.write import remember

path = sys.argv[1]
warm = MemRepo.open(path)
warm.policy().scanner()  # compile the rules once; forked writers inherit them
children = {}

def say(line):
    os.write(1, (line + "\n").encode())

def writer(worker):
    repo = MemRepo.open(path)
    repo._policies.update(warm._policies)  # the compiled policy of the same policies/ tree
    i = 0
    while True:
        r = remember(repo, f"worker {worker} wrote fact number {i} before it was killed", scope="knowledge")
        say(f"ack {worker} {r.results[0].id} {r.commit}")
        i += 1

say("ready")
for line in sys.stdin:
    cmd, _, worker = line.strip().partition(" ")
    if cmd == "spawn":
        pid = os.fork()
        if pid == 0:
            try:
                import ctypes
                ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: never outlive the spawner
                writer(worker)
            except BaseException as exc:
                say(f"died {worker} {type(exc).__name__}: {exc}".replace("\n", " "))
                os._exit(1)
        children[worker] = pid
        say(f"spawned {worker} {pid}")
    elif cmd == "kill":
        pid = children.pop(worker)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        say(f"killed {worker} {os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL}")
    elif cmd == "exit":
        break
for pid in children.values():
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
say("bye")
"""

HOLD_REF_LOCK = r"""
import sys, time
from memrepo.gitstore import Store
store = Store.open(sys.argv[1])
name = store.refname("provisional")
tip = store.tip("provisional")
with store.branch_lock("provisional"):
    store._write_intent(name, tip)  # what cas_ref records just before git's ref lock
    with store.repo.transaction() as txn:
        txn.lock_ref(name)
        print("locked", flush=True)
        time.sleep(600)
"""


class Spawner:
    """Drives the spawner process: spawn and kill writers, collect acknowledged writes."""

    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", SPAWNER, str(path)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=git_env())
        self.acked: list[tuple[str, str]] = []
        self.events: list[str] = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.wait_for("ready", timeout=120)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.cond:
                if line.startswith("ack "):
                    _, _, eid, commit = line.split()
                    self.acked.append((eid, commit))
                else:
                    self.events.append(line.strip())
                self.cond.notify_all()

    def wait_for(self, prefix: str, timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for i, ev in enumerate(self.events):
                    if ev.startswith(prefix):
                        return self.events.pop(i)
                    assert not ev.startswith("died"), ev
                left = deadline - time.monotonic()
                assert left > 0, f"spawner did not say {prefix!r}; events {self.events}"
                self.cond.wait(left)

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def spawn(self, worker: str) -> None:
        self.send(f"spawn {worker}")
        self.wait_for(f"spawned {worker} ")

    def kill(self, worker: str) -> None:
        self.send(f"kill {worker}")
        assert self.wait_for(f"killed {worker} ") == f"killed {worker} True"

    def close(self) -> list[tuple[str, str]]:
        try:
            self.send("exit")
            self.wait_for("bye")
            self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()  # its writers die with it (PR_SET_PDEATHSIG)
                self.proc.wait()
        with self.cond:
            assert not [e for e in self.events if e.startswith("died")], self.events
            return list(self.acked)


def kill_run(path: Path, kills: int, writers: int = 3, seed: int = 0, max_delay: float = 0.25) -> list[tuple[str, str]]:
    """Keep ``writers`` writers busy; SIGKILL a random one at a random moment ``kills`` times."""
    rnd = random.Random(seed)
    sp = Spawner(path)
    try:
        live = []
        for w in range(writers):
            sp.spawn(f"s{seed}w{w}")
            live.append(f"s{seed}w{w}")
        for k in range(kills):
            time.sleep(rnd.uniform(0.0, max_delay))
            victim = live.pop(rnd.randrange(len(live)))
            sp.kill(victim)
            new = f"s{seed}k{k}"
            sp.spawn(new)
            live.append(new)
        time.sleep(max_delay)
    finally:
        acked = sp.close()
    return acked


def cli(path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(python_cmd() + ["-C", str(path), *argv], capture_output=True, text=True, env=git_env(),
                          timeout=120, check=False)


def assert_repository_sound(path: Path, acked: list[tuple[str, str]]) -> None:
    fsck = subprocess.run(["git", "--git-dir", str(path), "fsck", "--strict", "--no-dangling"], capture_output=True,
                          text=True, env=git_env(), check=False)
    assert fsck.returncode == 0, fsck.stdout + fsck.stderr
    # every ref points at a commit that exists
    repo = pygit2.Repository(str(path))
    for name in repo.references:
        assert isinstance(repo[repo.references[name].resolve().target].peel(pygit2.Commit), pygit2.Commit), name
    # every acknowledged write is on the branch: its commit is in the history and its entry in the tree
    tip = repo.references["refs/heads/provisional"].target
    history = {str(c.id) for c in repo.walk(tip)}
    tree = repo[tip].peel(pygit2.Commit).tree
    present = {Path(p).stem for p in _paths(repo, tree, "memories/knowledge")}
    missing_commits = [c for _, c in acked if c not in history]
    missing_entries = [e for e, _ in acked if e not in present]
    assert not missing_commits and not missing_entries, (missing_commits[:5], missing_entries[:5])


def _paths(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str) -> list[str]:
    out = []
    stack = [(prefix, repo[tree[prefix].id])] if prefix in tree else []
    while stack:
        root, t = stack.pop()
        for item in t:
            if item.filemode == pygit2.GIT_FILEMODE_TREE:
                stack.append((f"{root}/{item.name}", repo[item.id]))
            else:
                out.append(f"{root}/{item.name}")
    return out


def doctor_then_write(path: Path) -> dict[str, object]:
    """doctor explains every leftover lock; --fix clears those proven stale; then a write succeeds."""
    report = json.loads(cli(path, "doctor", "--format", "json").stdout)
    for lock in report["locks"]:
        assert lock["reason"], lock
        assert lock["stale"], lock  # every writer is dead: what they left is provably stale
    fixed = cli(path, "doctor", "--fix", "--format", "json")
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert json.loads(fixed.stdout)["ok"] is True
    done = cli(path, "remember", "written after the crashes", "--scope", "knowledge", "--format", "json")
    assert done.returncode == 0, done.stderr
    return report


def test_sigkilled_writers_lose_nothing_acknowledged(bare_repo):
    acked = kill_run(bare_repo, kills=15, seed=8, max_delay=0.3)
    assert acked  # writes were acknowledged between the kills
    assert_repository_sound(bare_repo, acked)
    doctor_then_write(bare_repo)
    assert_repository_sound(bare_repo, acked)


@pytest.mark.slow
def test_many_sigkills_over_several_runs(bare_repo):
    total_kills = 0
    acked: list[tuple[str, str]] = []
    for run_no, (kills, delay) in enumerate([(40, 0.25), (40, 0.05), (30, 0.6)]):
        acked += kill_run(bare_repo, kills=kills, seed=100 + run_no, max_delay=delay, writers=4)
        total_kills += kills
        assert_repository_sound(bare_repo, acked)
        doctor_then_write(bare_repo)
    assert total_kills >= 100
    assert_repository_sound(bare_repo, acked)


def test_lock_left_by_a_killed_writer_is_proven_stale_and_cleared(bare_repo):
    holder = subprocess.Popen([sys.executable, "-c", HOLD_REF_LOCK, str(bare_repo)], stdout=subprocess.PIPE,
                              text=True, env=git_env())
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        lock = bare_repo / "refs" / "heads" / "provisional.lock"
        assert lock.exists()
        # alive: doctor says so and --fix leaves it
        live = json.loads(cli(bare_repo, "doctor", "--fix", "--format", "json").stdout)
        assert live["locks"][0]["stale"] is False and live["locks"][0]["removed"] is False and lock.exists()
        assert "running memrepo process" in live["locks"][0]["reason"]
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait()
    # dead: the lock is still there; doctor explains whose it was
    assert lock.exists()
    report = json.loads(cli(bare_repo, "doctor", "--format", "json").stdout)
    (found,) = report["locks"]
    assert found["stale"] is True and found["left_by_pid"] == holder.pid and report["ok"] is False
    assert f"memrepo process {holder.pid}" in cli(bare_repo, "doctor").stdout
    # the next write clears a lock a dead memrepo writer provably left, and succeeds
    done = cli(bare_repo, "remember", "written after the holder died", "--scope", "knowledge")
    assert done.returncode == 0, done.stderr
    assert not lock.exists()
    assert_repository_sound(bare_repo, [])


def test_foreign_locks_are_not_cleared_until_proven_stale(bare_repo, tmp_path):
    lock = bare_repo / "refs" / "heads" / "provisional.lock"
    # a fresh lock with no memrepo record: maybe a git process; left alone
    lock.write_text("1" * 40 + "\n")
    report = json.loads(cli(bare_repo, "doctor", "--fix", "--format", "json").stdout)
    assert report["locks"][0]["stale"] is False and lock.exists()
    # old, but some process has it open: left alone
    old = time.time() - 3600
    os.utime(lock, (old, old))
    keeper = subprocess.Popen([sys.executable, "-c", ("import sys,time; f=open(sys.argv[1]); print('open', flush=True); "
                                                          "time.sleep(600)"), str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert keeper.stdout is not None and keeper.stdout.readline().strip() == "open"
        report = json.loads(cli(bare_repo, "doctor", "--fix", "--format", "json").stdout)
        assert report["locks"][0]["open_by"] == [keeper.pid] and lock.exists()
    finally:
        keeper.kill()
        keeper.wait()
    # old and nobody has it open: stale, cleared
    report = json.loads(cli(bare_repo, "doctor", "--fix", "--format", "json").stdout)
    assert report["locks"][0]["removed"] is True and not lock.exists()


def test_doctor_reports_a_ref_pointing_at_a_missing_object(bare_repo):
    (bare_repo / "refs" / "heads" / "broken").write_text("0123456789" * 4 + "\n")
    out = cli(bare_repo, "doctor", "--format", "json")
    report = json.loads(out.stdout)
    assert out.returncode == 1 and report["refs"][0]["ref"] == "refs/heads/broken" and "Traceback" not in out.stderr


DURABILITY_PROBE = r"""
import sys
from memrepo.gitstore import fsync_enabled
from memrepo.verbs.write import remember
remember(sys.argv[1], "probe " + sys.argv[2], scope="knowledge")
print(fsync_enabled())
"""


def _fsync_after_a_write(path: Path, tag: str) -> bool:
    out = subprocess.run([sys.executable, "-c", DURABILITY_PROBE, str(path), tag], capture_output=True, text=True,
                         env=git_env(), timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip() == "True"


def test_durability_switch_policy_and_git_config(bare_repo):
    from memrepo.gitstore import Commit, format_message
    from memrepo.repo import MemRepo

    assert _fsync_after_a_write(bare_repo, "default") is False  # off by default
    store = MemRepo.open(bare_repo).store
    policy = store.branch_snapshot("verified").read("policies/policy.yaml")
    assert policy is not None and b"fsync: false" in policy
    store.transact("verified", lambda s: Commit({"policies/policy.yaml": policy.replace(b"fsync: false", b"fsync: true")},
                                                format_message("durable", "", [])))
    assert _fsync_after_a_write(bare_repo, "policy") is True  # durability: {fsync: true} on verified
    cfg = pygit2.Repository(str(bare_repo)).config
    cfg["memrepo.fsync"] = False
    assert _fsync_after_a_write(bare_repo, "config-off") is False  # the machine's git config wins
    cfg["memrepo.fsync"] = True
    assert _fsync_after_a_write(bare_repo, "config-on") is True
