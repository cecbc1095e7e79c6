"""Skill verbs on real repositories: create, patch, edit, write-file, remove-file, delete, view, list."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from skillkit import changed_paths, read, skill_md, tip, trailers

from memrepo.errors import Ambiguous, Blocked, Conflict, NotFound, UsageError
from memrepo.verbs import skills
from memrepo.verbs.audit import read_audit
from memrepo.verbs.provenance import Provenance

NAME = "flask-k8s-deploy"
PATH = f"skills/devops/{NAME}/SKILL.md"


@pytest.fixture
def with_skill(repo):
    skills.create(repo, NAME, skill_md(), category="devops")
    return repo


def test_create_is_one_commit_on_provisional_with_provenance(repo, run):
    verified_before = tip(repo, "verified").id
    (repo.parent / "s.md").write_text(skill_md(extra="metadata:\n  origin: verified_manual\n"))
    code, out, _ = run("-C", repo, "skill", "create", NAME, "--file", repo.parent / "s.md", "--category", "devops",
                       "--agent", "hermes", "--session", "s-9", "--format", "json", json_out=True)
    assert code == 0
    assert set(out) >= {"name", "category", "action", "branch", "commit", "path", "message", "findings"}
    assert (out["action"], out["branch"], out["path"], out["category"]) == ("created", "provisional", PATH, "devops")
    assert out["commit"] == str(tip(repo, "provisional").id) and tip(repo, "verified").id == verified_before
    assert changed_paths(repo) == [PATH]
    t = trailers(repo)
    assert t["Memrepo-Op"] == ["skill-create"] and t["Memrepo-Skill"] == [NAME]
    assert t["Memrepo-Origin"] == ["agent_inferred"] and t["Memrepo-Agent"] == ["hermes"]
    assert t["Memrepo-Session"] == ["s-9"] and tip(repo, "provisional").author.name == "hermes"
    text = read(repo, "provisional", PATH).decode()
    # the writer's origin is recorded, not the file's own claim; memrepo's fields live under metadata
    assert "metadata:\n" in text and "\n  version: 1.0.0\n" in text and "\n  origin: agent_inferred\n" in text
    assert "verified_manual" in out["message"]


@pytest.mark.parametrize("name", ["Flask", "-flask", "flask-", "fl--ask", "a" * 65, "fl_ask", "../etc", ""])
def test_create_refuses_bad_names(repo, run, name):
    before = tip(repo, "provisional").id
    (repo.parent / "s.md").write_text(skill_md(name=name or "x"))
    code, out, err = run("-C", repo, "skill", "create", "--file", repo.parent / "s.md", "--format", "json", "--", name,
                         json_out=True)
    assert code == 2 and out["error"] == "usage" and "a-z, 0-9" in out["hint"] and "Traceback" not in err
    assert tip(repo, "provisional").id == before


def test_create_refuses_bad_category_and_existing_name(with_skill):
    with pytest.raises(UsageError, match="category"):
        skills.create(with_skill, "other", skill_md(name="other"), category="references")
    with pytest.raises(Conflict, match="already exists") as exc:
        skills.create(with_skill, NAME, skill_md(), category="ops")  # unique across categories
    assert "skill patch" in exc.value.hint


def test_name_that_differs_from_its_folder_is_blocked_and_audited(repo):
    before = tip(repo, "provisional").id
    with pytest.raises(Blocked) as exc:
        skills.create(repo, "k8s-deploy", skill_md(), prov=Provenance(agent="hermes"))
    assert "skill.name-mismatch" in exc.value.what and exc.value.where.startswith("skills/k8s-deploy/SKILL.md:2")
    assert tip(repo, "provisional").id == before
    audit = read_audit(skills.create.__globals__["MemRepo"].open(repo), "blocked_write")
    assert audit[-1]["skill"] == "k8s-deploy" and "skill.name-mismatch" in audit[-1]["rules"]
    assert audit[-1]["agent"] == "hermes"


def test_frontmatter_that_breaks_the_schema_is_blocked(repo):
    with pytest.raises(Blocked, match="skill.parse|skill.schema"):
        skills.create(repo, "x", "no frontmatter here\n")
    with pytest.raises(Blocked, match="skill.schema"):
        skills.create(repo, "x", "---\nname: x\nmetadata:\n  version: '2'\n---\nbody\n")  # no description


def test_hermes_style_top_level_fields_move_under_metadata(repo):
    res = skills.create(repo, "x", "---\nname: x\ndescription: Do x\nversion: 2.0.0\ntags: [a, b]\n---\nbody\n")
    text = read(repo, "provisional", "skills/x/SKILL.md").decode()
    assert "metadata:\n  version: 2.0.0\n  tags: a, b\n  origin: agent_inferred\n" in text
    assert res.version == "2.0.0" and "moved version to metadata.version" in res.message


def test_patch_bumps_version_and_touches_only_skill_md(with_skill, run):
    code, out, _ = run("-C", with_skill, "skill", "patch", NAME, "--old", "- MUST push image to registry before kubectl apply",
                       "--new", "- MUST push image to registry before kubectl apply\n- Django needs ALLOWED_HOSTS",
                       "--format", "json", json_out=True)
    assert code == 0 and out["action"] == "patched" and out["version"] == "1.0.1" and out["strategy"] == "exact"
    assert changed_paths(with_skill) == [PATH]
    assert trailers(with_skill)["Memrepo-Op"] == ["skill-patch"]
    assert "- Django needs ALLOWED_HOSTS\n" in read(with_skill, "provisional", PATH).decode()


def test_patch_tolerates_whitespace_and_unicode_drift(with_skill):
    res = skills.patch(with_skill, NAME, "2.  Build and push\u00a0image to registry BEFORE\u200b creating deployment",
                       "2. Build and push the image BEFORE creating the deployment")
    assert res.extra["strategy"] in ("whitespace", "unicode")
    assert "2. Build and push the image BEFORE creating the deployment\n" in read(with_skill, "provisional", PATH).decode()


def test_patch_matching_twice_is_refused_with_candidates(with_skill, run):
    before = tip(with_skill, "provisional").id
    code, out, err = run("-C", with_skill, "skill", "patch", NAME, "--old", "push image to registry", "--new", "push",
                         "--format", "json", json_out=True)
    assert code == 1 and out["error"] == "ambiguous" and "Traceback" not in err
    assert [c["line"] for c in out["candidates"]] == [15, 19] and out["where"] == PATH
    assert "BEFORE creating deployment" in out["candidates"][0]["context"]
    assert tip(with_skill, "provisional").id == before
    res = skills.patch(with_skill, NAME, "push image to registry", "push the image to the registry", replace_all=True)
    assert res.extra["replacements"] == 2


def test_patch_not_found_names_the_closest_line(with_skill):
    with pytest.raises(NotFound) as exc:
        skills.patch(with_skill, NAME, "Create Dockerfile with uwsgi", "x")
    assert "closest line" in exc.value.hint and exc.value.where == PATH


def test_patch_cannot_launder_an_external_origin(repo):
    skills.create(repo, "x", skill_md(name="x"), origin="external_tool")
    skills.patch(repo, "x", "origin: external_tool", "origin: verified_manual")  # the agent edits the claim
    assert "origin: external_tool" in read(repo, "provisional", "skills/x/SKILL.md").decode()
    res = skills.patch(repo, "x", "## Pitfalls", "## Pitfalls learned")
    assert res.origin == "external_tool" and trailers(repo)["Memrepo-Origin"] == ["external_tool"]


def test_patch_a_supporting_file_and_a_missing_one(with_skill):
    skills.write_file(with_skill, NAME, "references/probes.md", "livenessProbe path must return 200\n")
    res = skills.patch(with_skill, NAME, "return 200", "return 200 within 1s", file="references/probes.md")
    assert sorted(res.files) == [PATH, f"skills/devops/{NAME}/references/probes.md"] and res.version == "1.0.2"
    with pytest.raises(NotFound, match="no file"):
        skills.patch(with_skill, NAME, "a", "b", file="references/none.md")
    with pytest.raises(UsageError, match="'..'"):
        skills.patch(with_skill, NAME, "a", "b", file="references/../../../policies/policy.yaml")


def test_edit_replaces_skill_md_and_identical_content_is_a_noop(with_skill):
    res = skills.edit(with_skill, NAME, skill_md(description="Deploy Flask or Django apps to Kubernetes"))
    assert res.action == "edited" and res.version == "1.0.1" and changed_paths(with_skill) == [PATH]
    same = read(with_skill, "provisional", PATH)
    before = tip(with_skill, "provisional").id
    again = skills.edit(with_skill, NAME, same)
    assert again.action == "unchanged" and again.commit is None and tip(with_skill, "provisional").id == before


@pytest.mark.parametrize("bad", ["../escape.md", "references/../../x.md", "/etc/passwd", "notes.md", "references\\x.md",
                                 "references/", ".git/config", "SKILL.md", "references//x.md"])
def test_write_file_refuses_path_traversal_and_paths_outside_the_dirs(with_skill, run, bad):
    before = tip(with_skill, "provisional").id
    (with_skill.parent / "f").write_text("x")
    code, out, err = run("-C", with_skill, "skill", "write-file", NAME, bad, "--file", with_skill.parent / "f",
                         "--format", "json", json_out=True)
    assert code == 2 and out["error"] == "usage" and "Traceback" not in err
    assert tip(with_skill, "provisional").id == before


def test_write_file_and_remove_file(with_skill):
    res = skills.write_file(with_skill, NAME, "templates/deployment.yaml", "kind: Deployment\n")
    assert res.action == "file_written" and sorted(res.files) == [PATH, f"skills/devops/{NAME}/templates/deployment.yaml"]
    assert skills.write_file(with_skill, NAME, "templates/deployment.yaml", "kind: Deployment\n").action == "unchanged"
    res = skills.remove_file(with_skill, NAME, "templates/deployment.yaml")
    assert res.action == "file_removed" and read(with_skill, "provisional", f"skills/devops/{NAME}/templates/deployment.yaml") is None
    with pytest.raises(NotFound, match="no file"):
        skills.remove_file(with_skill, NAME, "templates/deployment.yaml")


def test_delete_removes_the_folder_on_provisional_only(with_skill):
    skills.write_file(with_skill, NAME, "references/a.md", "a\n")
    res = skills.delete(with_skill, NAME)
    assert res.action == "deleted" and changed_paths(with_skill) == [PATH, f"skills/devops/{NAME}/references/a.md"]
    assert trailers(with_skill)["Memrepo-Op"] == ["skill-delete"]
    with pytest.raises(NotFound):
        skills.view(with_skill, NAME)
    with pytest.raises(NotFound, match="no skill named"):
        skills.delete(with_skill, NAME)


def test_view_and_list_say_which_branch(with_skill, run):
    view = skills.view(with_skill, NAME)
    assert (view["branch"], view["verified"], view["pending"]) == ("provisional", False, True)
    assert view["content"].startswith("---\nname: flask-k8s-deploy\n") and view["files"] == ["SKILL.md"]
    code, out, _ = run("-C", with_skill, "promote", NAME, "--reviewer", "Lin <lin@acme.io>")
    assert code == 0
    view = skills.view(with_skill, NAME)
    assert (view["branch"], view["verified"], view["pending"]) == ("verified", True, False)
    skills.write_file(with_skill, NAME, "assets/logo.png", b"\x89PNG\r\n\x1a\n\x00\x00")
    assert skills.view(with_skill, NAME)["pending"] is True
    png = skills.view(with_skill, NAME, "assets/logo.png", branch="provisional")
    assert png["encoding"] == "base64"
    rows = skills.list_skills(with_skill)
    assert [(r["name"], r["category"], r["branch"], r["pending"]) for r in rows] == [(NAME, "devops", "verified", True)]
    code, out, _ = run("-C", with_skill, "skill", "list")
    assert out == "devops/flask-k8s-deploy (pending review): Deploy a Flask app to Kubernetes with health checks\n"
    code, out, _ = run("-C", with_skill, "skill", "view", NAME)
    assert code == 0 and out.startswith("---\nname: flask-k8s-deploy")
    code, out, err = run("-C", with_skill, "skill", "view", "nope")
    assert code == 1 and "no skill named 'nope'" in err and "Traceback" not in err


def test_ambiguous_patch_then_no_write_on_conflicting_skill_places(repo):
    """Two categories holding one name (e.g. pushed by hand) make name-addressed verbs refuse, not guess."""
    from memrepo.gitstore import Commit
    from memrepo.repo import MemRepo

    mr = MemRepo.open(repo)
    mr.store.transact("provisional", lambda snap: Commit({"skills/a/x/SKILL.md": skill_md(name="x").encode(),
                                                         "skills/b/x/SKILL.md": skill_md(name="x").encode()}, "by hand\n"))
    with pytest.raises(Ambiguous, match="more than one place"):
        skills.patch(repo, "x", "Steps", "Stages")


@settings(max_examples=60, deadline=None)
@given(description=st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=80).filter(str.strip),
       body=st.text(max_size=200).filter(lambda b: "\x00" not in b),
       version=st.one_of(st.none(), st.from_regex(r"\A[0-9]{1,3}(\.[0-9]{1,3}){0,2}\Z")))
def test_normalising_is_idempotent_so_an_unchanged_edit_commits_nothing(description, body, version):
    import yaml

    from memrepo.model.skill import parse_skill_md
    from memrepo.policy.config import default_policy
    from memrepo.verbs.skills.common import normalise_skill_md

    policy = default_policy()
    meta = {"name": "x", "description": description} | ({"metadata": {"version": version}} if version else {})
    data = ("---\n" + yaml.safe_dump(meta, allow_unicode=True) + "---\n" + body).encode()
    first = normalise_skill_md(data, "skills/x/SKILL.md", policy=policy, old=None, claimed_origin="agent_inferred",
                               category=None)
    if first.skill is None:
        return  # does not fit the schema (e.g. a description the schema refuses): the checks refuse it
    again = normalise_skill_md(first.data, "skills/x/SKILL.md", policy=policy, old=first.skill,
                               claimed_origin="agent_inferred", category=None, bump=False)
    assert again.data == first.data
    assert parse_skill_md(first.data, "skills/x/SKILL.md").metadata["version"] == (version or "1.0.0")
    bumped = normalise_skill_md(first.data, "skills/x/SKILL.md", policy=policy, old=first.skill,
                                claimed_origin="agent_inferred", category=None)
    assert bumped.skill is not None and bumped.skill.version != first.skill.version
