"""Concurrent writers (threads and processes) never lose or overwrite each other's writes."""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pygit2

from memrepo.repo import MemRepo

WRITER = """
import sys
from memrepo.verbs.write import remember
path, worker, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    r = remember(path, f"worker {worker} fact {i} about concurrent writes", scope="knowledge")
    print(r.results[0].id, r.commit, flush=True)
"""


def entries_on(path: Path, branch: str) -> set[str]:
    repo = MemRepo.open(path)
    return {e.id for e in repo.iter_entries(repo.store.branch_snapshot(branch))}


def test_four_processes_fifty_writes_each(repo):
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(repo), str(w), "50"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(4)]
    acked: set[str] = set()
    commits: set[str] = set()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        for line in out.splitlines():
            eid, commit = line.split()
            acked.add(eid)
            commits.add(commit)
    assert len(acked) == 200 and len(commits) == 200
    assert entries_on(repo, "provisional") == acked
    # history is linear: 200 commits, each adding exactly one entry
    g = pygit2.Repository(str(repo))
    walked = [c for c in g.walk(g.references["refs/heads/provisional"].target) if c.message.startswith("add:")]
    assert len(walked) == 200
    assert subprocess.run(["git", "-C", str(repo), "fsck", "--strict"], capture_output=True).returncode == 0


def test_threads_share_a_repository(repo):
    from memrepo.verbs.write import remember

    errors: list[BaseException] = []
    ids: list[str] = []
    lock = threading.Lock()

    def work(w: int) -> None:
        try:
            for i in range(10):
                r = remember(str(repo), f"thread {w} note {i}", scope="knowledge")
                with lock:
                    ids.append(r.results[0].id)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert entries_on(repo, "provisional") == set(ids) and len(ids) == 40


def test_promote_while_writers_run_loses_nothing(repo):
    from memrepo.verbs.promote import promote
    from memrepo.verbs.write import remember

    first = [remember(str(repo), f"seed {i}", scope="knowledge").results[0].id for i in range(5)]
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(repo), str(w), "20"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in range(3)]
    for eid in first:
        promote(str(repo), [eid], reviewer="Lin <lin@acme.io>")
    acked: set[str] = set()
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        acked |= {line.split()[0] for line in out.splitlines()}
    verified = entries_on(repo, "verified")
    assert verified == set(first)
    assert entries_on(repo, "provisional") == acked | set(first)
