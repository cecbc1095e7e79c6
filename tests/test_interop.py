"""import / export of Hermes Agent memory folders and Agent OS files: lossless round trips, never promoted."""
from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from memrepo.errors import MemrepoError
from memrepo.model.hermes import parse_hermes
from memrepo.repo import MemRepo
from memrepo.verbs.init import init
from memrepo.verbs.interop import export_agentos, export_hermes, import_agentos, import_hermes
from memrepo.verbs.promote import promote
from memrepo.verbs.render import render
from memrepo.verbs.review import review
from memrepo.verbs.write import remember

REVIEWER = "Lin <lin@acme.io>"
SKILL = ("---\nname: pg-slow-query\ndescription: Find and fix a slow PostgreSQL query\n---\n"
         "# Slow query triage\n\n1. EXPLAIN (ANALYZE, BUFFERS)\n2. 检查索引是否被使用\n")


def tip(path: Path, branch: str) -> pygit2.Oid:
    r = pygit2.Repository(str(path))
    return pygit2.Oid(hex=str(r.references[f"refs/heads/{branch}"].target))


def promote_all(repo: MemRepo) -> None:
    ids = [item.id for item in review(repo)]
    assert ids
    promote(repo, ids, reviewer=REVIEWER)


def fresh(path: Path) -> MemRepo:
    """A new repository, opened once: the policy (and its compiled scanner) is loaded once per test."""
    init(path)
    return MemRepo.open(path)


def seeded(tmp_path: Path, name: str = "a") -> MemRepo:
    path = tmp_path / name
    repo = fresh(path)
    remember(repo, "Builds use uv 0.5; pip is not used")
    remember(repo, "CI runs on GitHub Actions\nwith two jobs: lint and test", tags=["ci"])
    remember(repo, "生产数据库在东京机房, 每天凌晨三点备份", tags=["db", "backup"], kind="fact", ttl="1y",
             origin="external_tool", source_type="web")
    remember(repo, "User is Lin, a DBA who prefers short answers", scope="user", kind="preference")
    remember(repo, "The team | uses ] odd \\ characters too", scope="knowledge", tags=["misc"])
    return repo


def test_hermes_round_trip_is_byte_identical_and_never_promoted(tmp_path: Path) -> None:
    a = seeded(tmp_path)
    try:
        from memrepo.verbs.skills import create
        create(a, "pg-slow-query", SKILL, category="devops")
        with_skills = True
    except ImportError:
        with_skills = False
    promote_all(a)

    first = export_hermes(a, tmp_path / "hermes1")
    memory_md = (tmp_path / "hermes1" / "memories" / "MEMORY.md").read_bytes()
    user_md = (tmp_path / "hermes1" / "memories" / "USER.md").read_bytes()
    rendered = [block for block in render(a).blocks if block.scope == "memory"][0]
    assert parse_hermes(memory_md.decode()) == [e["text"] for e in rendered.entries]  # the prompt's order
    assert sorted(parse_hermes(memory_md.decode())) == sorted(["Builds use uv 0.5; pip is not used",
                                                               "CI runs on GitHub Actions\nwith two jobs: lint and test",
                                                               "生产数据库在东京机房, 每天凌晨三点备份"])
    assert b"\n\xc2\xa7\n" in memory_md and not memory_md.endswith(b"\n")  # Hermes' own layout: '\n§\n', no final LF
    assert user_md == b"User is Lin, a DBA who prefers short answers"
    assert first.counts["memory"] == 3 and first.counts["user"] == 1

    b = fresh(tmp_path / "b")
    verified_before = tip(b.path, "verified")
    result = import_hermes(b, tmp_path / "hermes1", origin="verified_manual")
    assert result.to_json()["imported"] == 4 and result.to_json()["promoted"] is False
    assert tip(b.path, "verified") == verified_before  # the import itself promotes nothing
    pending = review(b)
    assert {i.origin for i in pending if i.kind == "entry"} == {"verified_manual"}  # the origin asked for is kept
    assert str(tip(b.path, "provisional")) in {result.commit, result.skills_commit}

    promote_all(b)
    export_hermes(b, tmp_path / "hermes2")
    for name in ("MEMORY.md", "USER.md"):
        assert (tmp_path / "hermes2" / "memories" / name).read_bytes() == \
            (tmp_path / "hermes1" / "memories" / name).read_bytes()
    if with_skills:
        skill_md = tmp_path / "hermes2" / "skills" / "devops" / "pg-slow-query" / "SKILL.md"
        assert "检查索引是否被使用" in skill_md.read_text("utf-8")

    # importing the same folder again adds nothing (exact duplicates)
    again = import_hermes(b, tmp_path / "hermes1", skills=False)
    assert again.to_json()["imported"] == 0 and again.to_json()["duplicates"] == 4 and again.commit is None


def test_agentos_round_trip_keeps_every_field(tmp_path: Path) -> None:
    a = seeded(tmp_path)
    promote_all(a)
    export_agentos(a, tmp_path / "a.aos")
    text = (tmp_path / "a.aos").read_text("utf-8")
    assert len(text.splitlines()) == 5
    assert "|external_tool] 生产数据库在东京机房" in text and "with two jobs" in text and "\\n" in text

    b = fresh(tmp_path / "b")
    verified_before = tip(b.path, "verified")
    result = import_agentos(b, tmp_path / "a.aos")
    assert result.to_json()["imported"] == 5
    assert {e["scope"] for e in result.entries} == {"memory", "user", "knowledge"}  # type names the scope
    assert tip(b.path, "verified") == verified_before
    origins = {i.text: i.origin for i in review(b)}
    assert origins["生产数据库在东京机房, 每天凌晨三点备份"] == "external_tool"
    assert origins["Builds use uv 0.5; pip is not used"] == "agent_inferred"

    promote_all(b)
    export_agentos(b, tmp_path / "b.aos")
    assert (tmp_path / "b.aos").read_bytes() == (tmp_path / "a.aos").read_bytes()


def test_import_errors_are_user_errors(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    repo = tmp_path / "r"
    init(repo)
    bad = tmp_path / "bad.aos"
    bad.write_text("[ok1|fact|memory|agent|pending|permanent||2026-01-01|1|agent_inferred] fine\n"
                   "[broken|fact|memory] missing fields\n", encoding="utf-8")
    code, out, err = run("-C", repo, "import", "agentos", bad, "--format", "json", json_out=True)
    assert code == 1 and "Traceback" not in err and out["where"].endswith("bad.aos:2")
    code, _, err = run("-C", repo, "import", "hermes", tmp_path / "nothing-here")
    assert code == 1 and "no such folder" in err and "hint" in err
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run("-C", repo, "import", "hermes", empty)
    assert code == 1 and "no MEMORY.md" in err
    code, _, err = run("-C", repo, "export", "agentos", tmp_path / "x.aos", "--branch", "nope")
    assert code == 2 and "unknown branch" in err  # a usage error


def test_cli_import_export_hermes(tmp_path: Path, run) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "home" / "memories"
    src.mkdir(parents=True)
    (src / "MEMORY.md").write_text("Deploys go through Argo CD\n§\n镜像仓库是 registry.acme.io", encoding="utf-8")
    repo = tmp_path / "r"
    init(repo)
    code, out, _ = run("-C", repo, "import", "hermes", tmp_path / "home", "--agent", "importer", "--format", "json",
                       json_out=True)
    assert code == 0 and out["imported"] == 2 and out["branch"] == "provisional"
    commit = pygit2.Repository(str(repo))[tip(repo, "provisional")]
    assert commit.author.name == "importer"
    code, out, _ = run("-C", repo, "export", "hermes", tmp_path / "out", "--branch", "provisional", "--format", "json",
                       json_out=True)
    assert code == 0 and out["counts"]["memory"] == 2
    assert (tmp_path / "out" / "memories" / "MEMORY.md").read_bytes() == (src / "MEMORY.md").read_bytes()
    code, out, _ = run("-C", repo, "export", "agentos", "-", "--branch", "provisional")
    assert code == 0 and out.count("\n") == 2 and "镜像仓库" in out


@pytest.mark.parametrize("bad", ["an entry\n§\n", "§\n§\n"])
def test_hermes_files_hermes_would_misread_still_import_what_it_reads(tmp_path: Path, bad: str) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "MEMORY.md").write_text(bad, encoding="utf-8")
    repo = fresh(tmp_path / "r")
    expected = parse_hermes(bad)
    if not expected:
        with pytest.raises(MemrepoError):
            import_hermes(repo, home)
        return
    result = import_hermes(repo, home)
    assert result.to_json()["imported"] == len(expected)
