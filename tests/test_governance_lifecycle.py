"""Lifecycle (ttl from git history), duplicates and skill drafts, on real repositories."""
from __future__ import annotations

import time

import pygit2

from memrepo.gitstore import Commit, format_message, parse_trailers
from memrepo.repo import MemRepo
from memrepo.verbs.curate import curate, expiries, last_changes
from memrepo.verbs.promote import promote
from memrepo.verbs.review import review
from memrepo.verbs.write import remember

REVIEWER = "Lin <lin@acme.io>"


_OPEN: dict[str, MemRepo] = {}


def R(path) -> MemRepo:
    return _OPEN.setdefault(str(path), MemRepo.open(path))
DAY = 86400


def _tip(path, branch):
    repo = pygit2.Repository(str(path))
    return repo[repo.references[f"refs/heads/{branch}"].target]


def test_expired_entry_is_proposed_for_removal_in_one_commit(repo, run):
    short = remember(R(repo), "The sprint goal is the importer rewrite", ttl="30d").results[0].id
    forever = remember(R(repo), "The repository is hosted on git.acme.io").results[0].id
    yearly = remember(R(repo), "The on-call rota changes every Monday", ttl="1y").results[0].id
    promote(R(repo), [short, forever, yearly], reviewer=REVIEWER)
    assert curate(R(repo), dry_run=True).expired == []  # nothing expired today
    before = _tip(repo, "provisional").id
    result = curate(R(repo), now=time.time() + 31 * DAY)
    assert [e["id"] for e in result.expired] == [short]
    commit = _tip(repo, "provisional")
    assert commit.parents[0].id == before and str(commit.id) == result.commit
    assert parse_trailers(commit.message)["Memrepo-Op"] == ["curate"]
    paths = {d.old_file.path for d in commit.parents[0].tree.diff_to_tree(commit.tree).deltas}
    assert paths == {f"memories/memory/{short}.md"}
    # it is a proposal: verified keeps the entry; the removal waits in review for a person
    assert f"memories/memory/{short}.md" in _tip(repo, "verified").tree
    assert [(i.id, i.change) for i in review(R(repo))] == [(short, "removed")]
    assert forever and yearly
    assert curate(R(repo), now=time.time() + 31 * DAY).commit is None  # proposed once, not again


def test_staleness_comes_from_git_not_the_updated_field(repo):
    """An entry whose `updated` text claims 2020 but whose file changed now is not stale."""
    mrepo = MemRepo.open(repo)
    old_text = ("---\nid: claims-old\nkind: fact\ntype: memory\nsource_type: agent\nverification: pending\nttl: 30d\n"
                "tags: []\nupdated: '2020-01-01'\nver: 1\norigin: agent_inferred\n---\nThe build cache lives on nas-2\n")
    mrepo.store.transact("provisional", lambda s: Commit({"memories/memory/claims-old.md": old_text.encode()},
                                                        format_message("plant", "", [])))
    snap = mrepo.store.branch_snapshot("provisional")
    changed = last_changes(mrepo, snap, ["memories/memory/claims-old.md"])
    assert abs(changed["memories/memory/claims-old.md"] - time.time()) < 120
    assert curate(R(repo), dry_run=True).expired == []
    assert [e.id for e in expiries(mrepo, snap)] == ["claims-old"]


def test_promotion_counts_as_the_last_change(repo):
    eid = remember(R(repo), "The staging database is pg-stage-3", ttl="30d").results[0].id
    promote(R(repo), [eid], reviewer=REVIEWER)
    mrepo = MemRepo.open(repo)
    snap = mrepo.store.branch_snapshot("provisional")
    path = f"memories/memory/{eid}.md"
    promote_commit = _tip(repo, "verified")
    assert last_changes(mrepo, snap, [path])[path] == promote_commit.commit_time


def test_near_duplicate_caught_at_write_in_check_and_merged_by_curate(repo, run):
    code, a, _ = run("-C", repo, "remember", "The deploy timeout is 30 seconds for staging", "--tags", "deploy",
                     "--format", "json", json_out=True)
    code, b, _ = run("-C", repo, "remember", "the deploy timeout is 30 seconds for staging builds", "--tags", "ci",
                     "--format", "json", json_out=True)
    assert code == 0 and b["status"] == "added"  # a near duplicate is written, with a warning that says so
    warn = [w for w in b["results"][0]["warnings"] if w["rule"] == "duplicate.near"]
    assert warn and a["id"] in warn[0]["message"]
    code, checked, _ = run("-C", repo, "check", "--format", "json", json_out=True)
    assert code == 0  # a warning, not a block
    assert any(f["rule"] == "duplicate.near" for f in checked["findings"])
    code, log, _ = run("-C", repo, "audit", "--kind", "duplicate", "--format", "json", json_out=True)
    assert log["log"] == "duplicate" and log["records"][0]["ids"] == [b["id"], a["id"]]
    result = curate(R(repo))
    [merge] = result.merged
    assert {merge["kept"], merge["removed"]} == {a["id"], b["id"]} and merge["kind"] == "near"
    tree = _tip(repo, "provisional").tree
    assert f"memories/memory/{merge['removed']}.md" not in tree
    path = f"memories/memory/{merge['kept']}.md"
    kept = MemRepo.open(repo).stored_entry(path, tree[path].id).entry
    assert kept is not None and set(kept.tags) == {"deploy", "ci"} and kept.ver == 2
    code, log, _ = run("-C", repo, "audit", "--kind", "duplicate", "--format", "json", json_out=True)
    assert log["records"][-1]["decision"].startswith("merge proposed")


def test_exact_duplicate_is_logged(repo, run):
    run("-C", repo, "remember", "Builds run on Linux runners")
    _, out, _ = run("-C", repo, "remember", "builds run on  linux RUNNERS", "--format", "json", json_out=True)
    assert out["status"] == "duplicate" and out["commit"] is None
    _code, log, _ = run("-C", repo, "audit", "--kind", "duplicate", "--format", "json", json_out=True)
    assert [r["kind"] for r in log["records"]] == ["exact"] and log["records"][0]["decision"].startswith("no-op")


def test_skill_draft_from_three_verified_entries_on_a_tag(repo):
    ids = [remember(R(repo), text, tags=["release"]).results[0].id for text in
           ("Releases are cut from the main branch", "Release notes live in CHANGES.md",
            "A release needs two approvals")]
    pending = remember(R(repo), "Release tags are signed", tags=["release"]).results[0].id
    assert curate(R(repo), dry_run=True).skills == []  # pending entries do not count
    promote(R(repo), ids, reviewer=REVIEWER)
    before_verified = _tip(repo, "verified").id
    result = curate(R(repo))
    assert [s["name"] for s in result.skills] == ["release"] and set(result.skills[0]["entries"]) == set(ids)
    assert pending not in result.skills[0]["entries"]
    assert _tip(repo, "verified").id == before_verified  # never written to verified
    tree = _tip(repo, "provisional").tree
    data = pygit2.Repository(str(repo))[tree["skills/release/SKILL.md"].id].data.decode()
    assert "name: release" in data and "origin: agent_inferred" in data and "Release notes live in CHANGES.md" in data
    assert "release" in {i.id for i in review(R(repo))}
    assert curate(R(repo)).skills == []  # not drafted twice
