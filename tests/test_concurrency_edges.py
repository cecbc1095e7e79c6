"""Concurrency at the edges: eight writer processes on provisional while a reviewer promotes and rejects.

No acknowledged write is lost, no pending entry is dropped by a promotion or a rejection of
others, and verified only ever holds what the reviewer promoted, in the form that was reviewed
(promote --at the reviewed commit).
"""
from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

from conftest import git_env

from memrepo.repo import MemRepo

WRITER = r"""
import sys
from memrepo.repo import MemRepo
from memrepo.verbs.write import remember
repo = MemRepo.open(sys.argv[1])
worker, n = sys.argv[2], int(sys.argv[3])
for i in range(n):
    r = remember(repo, f"writer {worker} recorded fact {i} during review", scope="knowledge")
    print(r.results[0].id, r.commit, flush=True)
"""
REVIEWER = "Lin <lin@acme.io>"


def texts_on(path: Path, rev: str) -> dict[str, str]:
    repo = MemRepo.open(path)
    return {e.id: e.entry.text for e in repo.iter_entries(repo.store.snapshot(rev)) if e.entry is not None}


def verification_on(path: Path, branch: str) -> dict[str, str]:
    repo = MemRepo.open(path)
    return {e.id: e.entry.verification for e in repo.iter_entries(repo.store.branch_snapshot(branch)) if e.entry is not None}


def test_eight_writers_while_promote_and_reject_run(bare_repo):
    from memrepo.verbs.promote import promote, reject
    from memrepo.verbs.review import review

    rnd = random.Random(6)
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(bare_repo), str(w), "12"], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=git_env()) for w in range(8)]
    repo = MemRepo.open(bare_repo)
    promoted: dict[str, str] = {}  # id -> text as reviewed
    rejected: set[str] = set()
    rounds = 0
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:
        running = any(p.poll() is None for p in procs)
        reviewed_at = str(repo.store.require_tip("provisional"))
        shown = texts_on(bare_repo, reviewed_at)  # what the reviewer saw: provisional at that commit
        pending = [it for it in review(repo) if it.kind == "entry" and it.id not in promoted and it.id not in rejected
                   and it.id in shown]
        if pending:
            rnd.shuffle(pending)
            take = pending[: rnd.randint(1, 3)]
            drop = pending[3: 3 + rnd.randint(0, 2)]
            promote(repo, [it.id for it in take], reviewer=REVIEWER, at=reviewed_at)
            promoted.update({it.id: it.text for it in take})
            if drop:
                reject(repo, [it.id for it in drop], reason="not needed", reviewer=REVIEWER)
                rejected.update(it.id for it in drop)
            rounds += 1
        if not running:
            break
    acked: dict[str, str] = {}
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        for line in out.splitlines():
            eid, commit = line.split()
            acked[eid] = commit
    assert len(acked) == 96 and rounds >= 3

    verified, provisional = texts_on(bare_repo, "verified"), texts_on(bare_repo, "provisional")
    # verified holds exactly what was promoted, as it was reviewed, marked verified
    assert set(verified) == set(promoted)
    assert all(verified[i] == promoted[i] for i in promoted)
    assert all(v == "verified" for v in verification_on(bare_repo, "verified").values())
    # nothing acknowledged is lost: every write is on provisional unless the reviewer rejected it
    assert set(acked) - rejected <= set(provisional)
    assert not rejected & set(provisional)
    # and every entry not yet decided is still pending review
    still_pending = {it.id for it in review(repo) if it.kind == "entry"}
    assert still_pending == set(acked) - rejected - set(promoted)


def test_promote_at_the_reviewed_commit_never_takes_a_later_change(repo, run):
    from memrepo.verbs.promote import promote
    from memrepo.verbs.review import review
    from memrepo.verbs.write import remember, replace

    eid = remember(str(repo), "Deploys go through the staging cluster first").results[0].id
    reviewed_at = str(MemRepo.open(repo).store.require_tip("provisional"))
    (item,) = [it for it in review(str(repo)) if it.id == eid]
    assert item.text == "Deploys go through the staging cluster first"
    # the entry changes after the reviewer looked at it
    replace(str(repo), eid, "Deploys go straight to production")
    promote(str(repo), [eid], reviewer=REVIEWER, at=reviewed_at)
    assert texts_on(repo, "verified")[eid] == "Deploys go through the staging cluster first"
    # the later change is not lost: it stays pending, as a change against what was promoted
    assert texts_on(repo, "provisional")[eid] == "Deploys go straight to production"
    (again,) = [it for it in review(str(repo)) if it.id == eid]
    assert again.old_text == "Deploys go through the staging cluster first" and again.text == "Deploys go straight to production"


def test_promote_at_a_commit_before_the_entry_existed_promotes_nothing_of_it(repo):
    from memrepo.errors import MemrepoError
    from memrepo.verbs.promote import promote
    from memrepo.verbs.write import remember

    before = str(MemRepo.open(repo).store.require_tip("provisional"))
    eid = remember(str(repo), "Backups run nightly at 02:00 UTC").results[0].id
    try:
        promote(str(repo), [eid], reviewer=REVIEWER, at=before)
    except MemrepoError:
        pass
    assert eid not in texts_on(repo, "verified")
    assert eid in texts_on(repo, "provisional")
