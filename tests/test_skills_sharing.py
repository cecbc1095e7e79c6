"""Sharing skills: review as a readable diff, promote/reject by name, the prompt index, importing a Hermes folder."""
from __future__ import annotations

import os

import pytest
from skillkit import REVIEWER, changed_paths, hermes_tree, malicious_skill, read, skill_md, tip, trailers

from memrepo.errors import UsageError
from memrepo.repo import MemRepo
from memrepo.verbs import skills
from memrepo.verbs.audit import read_audit
from memrepo.verbs.check import check_ref
from memrepo.verbs.provenance import Provenance

NAME = "flask-k8s-deploy"
PATH = f"skills/devops/{NAME}/SKILL.md"


@pytest.fixture
def promoted(repo, run):
    skills.create(repo, NAME, skill_md(), category="devops")
    assert run("-C", repo, "promote", NAME, "--reviewer", REVIEWER)[0] == 0
    return repo


def test_a_skill_patched_by_an_agent_shows_in_review_as_a_readable_diff(promoted, run):
    skills.patch(promoted, NAME, "- MUST push image to registry before kubectl apply",
                 "- MUST push image to registry before kubectl apply\n- Django: set ALLOWED_HOSTS from the service name",
                 prov=Provenance(agent="hermes", session="s-2"))
    code, out, _ = run("-C", promoted, "review")
    assert code == 0
    assert "changed  skill flask-k8s-deploy  [devops] origin=agent_inferred by hermes <hermes@agents.memrepo>" in out
    assert "Deploy a Flask app to Kubernetes with health checks (version 1.0.1)" in out
    assert f"--- a/{PATH}\n+++ b/{PATH}\n" in out  # shown without --diff: a patched skill is reviewed by its diff
    assert "-  version: 1.0.0\n+  version: 1.0.1\n" in out
    assert "+- Django: set ALLOWED_HOSTS from the service name\n" in out
    code, out, _ = run("-C", promoted, "review", "--format", "json", json_out=True)
    (item,) = out["entries"]
    assert (item["id"], item["kind"], item["scope"], item["change"], item["origin"]) == (
        NAME, "skill", "devops", "changed", "agent_inferred")
    assert item["paths"] == [PATH] and item["findings"] == [] and item["blocked"] is False
    assert item["diff"].count("\n+") == 3 and "@@" in item["diff"]  # +++, the version, the new line


def test_promote_then_the_index_shows_it_and_reject_restores_verified(promoted, run):
    code, out, _ = run("-C", promoted, "skill", "index")
    assert code == 0 and out == ("Available skills (load one with skill_view before following it):\n"
                   "devops:\n  - flask-k8s-deploy: Deploy a Flask app to Kubernetes with health checks\n")
    good = read(promoted, "verified", PATH)
    skills.patch(promoted, NAME, "gunicorn", "the flask dev server")
    assert run("-C", promoted, "reject", NAME, "--reason", "dev server is wrong in production")[0] == 0
    assert read(promoted, "provisional", PATH) == good
    skills.delete(promoted, NAME)
    assert skills.index(promoted)["skills"][0]["name"] == NAME  # verified keeps it until the deletion is promoted
    assert run("-C", promoted, "promote", NAME, "--reviewer", REVIEWER)[0] == 0
    assert skills.index(promoted)["text"] == "" and read(promoted, "verified", PATH) is None


def test_index_is_verified_only_cut_to_policy_and_byte_stable(promoted, run):
    long = "Debug pytest fixture scope issues. " * 10
    skills.create(promoted, "fix-pytest-fixtures", skill_md(name="fix-pytest-fixtures", description=long))
    skills.create(promoted, "zz-pending", skill_md(name="zz-pending", description="Not reviewed"))
    assert run("-C", promoted, "promote", "fix-pytest-fixtures", "--reviewer", REVIEWER)[0] == 0
    first = skills.index(promoted)
    assert [s["name"] for s in first["skills"]] == ["fix-pytest-fixtures", NAME]  # uncategorised first; no pending one
    line = first["text"].splitlines()[1]
    assert line.startswith("- fix-pytest-fixtures: Debug") and len(line.split(": ", 1)[1]) == 160 and line.endswith("…")
    code, out_a, _ = run("-C", promoted, "skill", "index")
    code, out_b, _ = run("-C", promoted, "skill", "index")
    assert out_a == out_b == first["text"] and skills.index(promoted, first["commit"]) == first
    with pytest.raises(UsageError, match="not on verified"):
        skills.index(promoted, "provisional")
    code, js, _ = run("-C", promoted, "skill", "index", "--format", "json", json_out=True)
    assert code == 0 and js["commit"] == str(tip(promoted, "verified").id) and js["text"] == first["text"]


def test_hermes_skills_folder_imports_validates_and_reports_the_bad_one(repo, tmp_path, run):
    src = hermes_tree(tmp_path / "hermes-skills")
    malicious_skill(src)
    (src / "devops" / "Bad_Name").mkdir()
    (src / "devops" / "Bad_Name" / "SKILL.md").write_text(skill_md(name="bad-name"))
    os.symlink("/etc/passwd", src / "software-development" / "fix-pytest-fixtures" / "references")
    verified = tip(repo, "verified").id
    code, out, err = run("-C", repo, "skill", "import", src, "--agent", "importer", "--format", "json", json_out=True)
    assert code == 1 and "Traceback" not in err  # some skills failed: said, and the rest imported
    assert [(s["name"], s["category"], s["action"]) for s in out["imported"]] == [(NAME, "devops", "created")]
    failed = {s["name"]: s for s in out["failed"]}
    assert set(failed) == {"Bad_Name", "speed-up-ci", "fix-pytest-fixtures"}
    assert "cmd.remote-exec" in {f["rule"] for f in failed["speed-up-ci"]["findings"]}
    assert {"skill.symlink"} <= {f["rule"] for f in failed["fix-pytest-fixtures"]["findings"]}
    # one commit, onto provisional, with external_tool recorded
    assert tip(repo, "verified").id == verified and out["commit"] == str(tip(repo, "provisional").id)
    assert changed_paths(repo) == [PATH, f"skills/devops/{NAME}/references/probes.md",
                                   f"skills/devops/{NAME}/templates/deployment.yaml"]
    t = trailers(repo)
    assert t["Memrepo-Op"] == ["skill-import"] and t["Memrepo-Skill"] == [NAME] and t["Memrepo-Origin"] == ["external_tool"]
    text = read(repo, "provisional", PATH).decode()
    for line in ("  version: 1.0.0\n", "  author: Hermes Agent\n", "  origin: external_tool\n", "license: MIT\n",
                 "  tags: kubernetes, flask, deploy\n"):
        assert line in text, line
    assert not [f for f in check_ref(repo).findings if f.blocking]  # it validates as an Agent Skills skill
    rules = {r["skill"]: r["rules"] for r in read_audit(MemRepo.open(repo), "blocked_write")}
    assert "cmd.remote-exec" in rules["speed-up-ci"]
    # importing the same folder again changes nothing
    again = skills.import_dir(repo, src)
    assert again["commit"] is None and again["imported"][0]["action"] == "unchanged"


def test_import_a_single_skill_with_a_category_and_update_it(repo, tmp_path):
    src = hermes_tree(tmp_path / "h") / "devops" / NAME
    res = skills.import_dir(repo, src, category="platform")
    assert res["imported"][0]["path"] == f"skills/platform/{NAME}/SKILL.md"
    (src / "references" / "probes.md").unlink()
    (src / "SKILL.md").write_text((src / "SKILL.md").read_text().replace("version: 1.0.0", "version: 1.1.0"))
    res = skills.import_dir(repo, src, category="platform")
    assert res["imported"][0]["action"] == "updated" and res["imported"][0]["version"] == "1.1.0"
    assert read(repo, "provisional", f"skills/platform/{NAME}/references/probes.md") is None
    res = skills.import_dir(repo, src, category="devops")
    assert res["failed"][0]["findings"][0]["rule"] == "skill.duplicate-name" and res["commit"] is None


def test_import_refuses_a_folder_without_skills(repo, tmp_path, run):
    (tmp_path / "empty").mkdir()
    code, _, err = run("-C", repo, "skill", "import", tmp_path / "empty")
    assert code == 2 and "no SKILL.md found" in err and "Traceback" not in err
    code, _, err = run("-C", repo, "skill", "import", tmp_path / "missing")
    assert code == 2 and "not a folder" in err
