"""Skill model: SKILL.md parse/serialise, names and paths, structural validation."""
from __future__ import annotations

import json

import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from memrepo.errors import MemrepoError, ParseError, UsageError
from memrepo.model.skill import (
    MODE_EXECUTABLE,
    MODE_FILE,
    MODE_SUBMODULE,
    MODE_SYMLINK,
    SPEC_DIRS,
    Skill,
    check_supporting_path,
    conform_frontmatter,
    default_skill_schema,
    index_description,
    join_tags,
    locate,
    parse_skill_md,
    schema_problems,
    serialise_skill_md,
    skill_dir,
    validate_skill,
)
from memrepo.resources import default_policies_dir

GOOD = b"""---
name: review-pr
description: Review a pull request for correctness and style. Use when asked to review a PR.
license: MIT
compatibility: Needs git and network access to the forge.
metadata:
  version: "1.2"
  origin: agent_inferred
  tags: git, review
allowed-tools: Bash Read
---
# Review a PR

1. Fetch the branch.
"""


def policy_skills() -> dict[str, object]:
    policy = yaml.safe_load((default_policies_dir() / "policy.yaml").read_text(encoding="utf-8"))
    return dict(policy["skills"])


def files_with(skill_md: bytes, **extra: tuple[int, bytes]) -> dict[str, tuple[int, bytes]]:
    files = {"SKILL.md": (MODE_FILE, skill_md)}
    files.update({k.replace("__", "/"): v for k, v in extra.items()})
    return files


def rules(findings: list) -> list[str]:
    return sorted(f.rule for f in findings)


# --- parse / serialise -------------------------------------------------------------------------


def test_parse_good_skill_md() -> None:
    skill = parse_skill_md(GOOD, "skills/git/review-pr/SKILL.md")
    assert skill.name == "review-pr"
    assert skill.category == "git"
    assert skill.license == "MIT"
    assert skill.metadata == {"version": "1.2", "origin": "agent_inferred", "tags": "git, review"}
    assert skill.tags == ("git", "review")
    assert skill.version == "1.2" and skill.origin == "agent_inferred"
    assert skill.allowed_tools == "Bash Read"
    assert skill.body == "# Review a PR\n\n1. Fetch the branch.\n"
    assert skill.path == "skills/git/review-pr/SKILL.md"


def test_serialise_is_deterministic_and_round_trips() -> None:
    skill = parse_skill_md(GOOD, "skills/review-pr/SKILL.md")
    data = serialise_skill_md(skill)
    assert data == serialise_skill_md(skill.with_())
    assert parse_skill_md(data, "skills/review-pr/SKILL.md") == skill
    assert data.startswith(b"---\nname: review-pr\ndescription: ")
    assert b"version: '1.2'" in data  # stays a string


def test_minimal_skill_omits_unset_fields() -> None:
    data = serialise_skill_md(Skill(name="a", description="d"))
    assert data == b"---\nname: a\ndescription: d\n---\n"


@pytest.mark.parametrize("data, fragment", [
    (b"no frontmatter", "missing YAML frontmatter"),
    (b"---\nname: a\n", "not closed"),
    (b"---\n- a\n---\n", "not a mapping"),
    (b"---\nname: a\n---\n", "description"),
    (b"---\nname: Bad_Name\ndescription: x\n---\n", "not 1-64 characters"),
    (b"---\nname: a\ndescription: x\nversion: 1\n---\n", "unknown field"),
    (b"---\nname: a\ndescription: x\nmetadata:\n  version: 1.0\n---\n", "not a string"),
    (b"---\nname: a\ndescription: x\nmetadata:\n  1: x\n---\n", "keys must be strings"),
    (b"---\nname: a\ndescription: '   '\n---\n", "blank"),
    (b"---\nname: &a x\ndescription: *a\n---\n", "aliases"),
    (b"---\nname: a\ndescription: \xff\n---\n", "UTF-8"),
])
def test_parse_refuses_bad_files(data: bytes, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_skill_md(data, "skills/a/SKILL.md")
    assert fragment in info.value.render()
    assert info.value.where.startswith("skills/a/SKILL.md")


def test_parse_error_names_the_line() -> None:
    data = b"---\nname: a\ndescription: ok\ncompatibility: " + b"x" * 501 + b"\n---\n"
    with pytest.raises(ParseError) as info:
        parse_skill_md(data, "s/SKILL.md")
    assert info.value.where == "s/SKILL.md:4"


def test_shipped_schema_is_valid_draft_2020_12() -> None:
    schema = json.loads((default_policies_dir() / "schemas" / "skill.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema == default_skill_schema()


def test_policy_skills_section_fits_policy_schema() -> None:
    schema = json.loads((default_policies_dir() / "schemas" / "policy.schema.json").read_text())
    policy = yaml.safe_load((default_policies_dir() / "policy.yaml").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(policy)
    assert set(policy["skills"]["allowed_dirs"]) == set(SPEC_DIRS)


# --- names and paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["a", "review-pr", "x1-2y", "a" * 64])
def test_skill_dir_accepts_good_names(name: str) -> None:
    assert skill_dir(name) == f"skills/{name}"
    assert skill_dir(name, "dev") == f"skills/dev/{name}"


@pytest.mark.parametrize("name", ["", "-a", "a-", "a--b", "A", "a_b", "a b", "a/b", "..", "a" * 65, "é"])
def test_skill_dir_refuses_bad_names(name: str) -> None:
    with pytest.raises(UsageError) as info:
        skill_dir(name)
    assert "a-z" in info.value.hint


def test_category_cannot_be_a_supporting_dir() -> None:
    with pytest.raises(UsageError):
        skill_dir("a", "scripts")


@pytest.mark.parametrize("path, expected", [
    ("skills/a/SKILL.md", (None, "a", "SKILL.md")),
    ("skills/a/references/x.md", (None, "a", "references/x.md")),
    ("skills/a/scripts/deep/run.sh", (None, "a", "scripts/deep/run.sh")),
    ("skills/dev/a/SKILL.md", ("dev", "a", "SKILL.md")),
    ("skills/dev/a/assets/logo.png", ("dev", "a", "assets/logo.png")),
    ("skills/a/notes.txt", (None, "a", "notes.txt")),
    ("skills/SKILL.md", None),
    ("skills/dev/a", (None, "dev", "a")),
    ("skills//a/SKILL.md", None),
    ("memories/memory/x.md", None),
    ("skills", None),
])
def test_locate(path: str, expected: object) -> None:
    assert locate(path) == expected


@pytest.mark.parametrize("relpath", ["references/api.md", "scripts/run.sh", "assets/img/logo.png", "templates/t.j2"])
def test_supporting_path_ok(relpath: str) -> None:
    assert check_supporting_path(relpath) == relpath


@pytest.mark.parametrize("relpath, fragment", [
    ("", "empty"),
    ("../secrets", "'..'"),
    ("references/../../x", "'..'"),
    ("references/./x", "'.'"),
    ("/etc/passwd", "absolute"),
    ("C:/x", "absolute"),
    ("references\\x.md", "backslash"),
    ("references//x.md", "empty part"),
    ("references/", "empty part"),
    ("references", "only under"),
    ("SKILL.md", "only under"),
    ("notes/x.md", "only under"),
    ("references/.git/config", ".git"),
    ("references/a\nb", "control"),
    ("references/" + "x" * 256, "255"),
])
def test_supporting_path_refused(relpath: str, fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        check_supporting_path(relpath)
    assert fragment in info.value.what
    assert "references" in info.value.hint


def test_supporting_path_respects_policy_dirs() -> None:
    with pytest.raises(UsageError):
        check_supporting_path("scripts/run.sh", allowed_dirs=["references"])


def test_index_description() -> None:
    assert index_description("Review  a PR.\nUse when asked.", None) == "Review a PR. Use when asked."
    assert index_description("Review a pull request", 10) == "Review a…"
    assert len(index_description("x" * 300, 160)) == 160


def test_join_tags() -> None:
    assert join_tags(["git", " review ", ""]) == "git, review"
    with pytest.raises(UsageError):
        join_tags(["a,b"])


# --- validation --------------------------------------------------------------------------------


def test_valid_skill_has_no_findings() -> None:
    files = files_with(GOOD, references__api_md=(MODE_FILE, b"# API\n"), scripts__run_sh=(MODE_EXECUTABLE, b"#!/bin/sh\n"))
    assert validate_skill(files, folder_name="review-pr", policy_skills=policy_skills()) == []


def test_name_must_equal_folder() -> None:
    findings = validate_skill(files_with(GOOD), folder_name="review", policy_skills=policy_skills(), category="git")
    assert rules(findings) == ["skill.name-mismatch"]
    finding = findings[0]
    assert finding.path == "skills/git/review/SKILL.md" and finding.line == 2 and finding.blocking
    assert "review" in finding.hint


def test_bad_folder_name_and_bad_name() -> None:
    data = GOOD.replace(b"name: review-pr", b"name: Review_PR")
    findings = validate_skill(files_with(data), folder_name="Review_PR", policy_skills=policy_skills())
    assert rules(findings) == ["skill.folder-name", "skill.schema"]


def test_missing_skill_md() -> None:
    findings = validate_skill({"references/a.md": (MODE_FILE, b"x")}, folder_name="a", policy_skills=policy_skills())
    assert rules(findings) == ["skill.missing-skill-md"]


def test_unparseable_skill_md_is_a_finding_not_an_exception() -> None:
    findings = validate_skill(files_with(b"---\nname: [\n---\n"), folder_name="a", policy_skills=policy_skills())
    assert rules(findings) == ["skill.parse"]
    assert findings[0].line == 2


def test_binary_skill_md() -> None:
    findings = validate_skill(files_with(b"---\x00\x01"), folder_name="a", policy_skills=policy_skills())
    assert rules(findings) == ["skill.parse"]


def test_schema_findings_carry_lines() -> None:
    data = b"---\nname: a\ndescription: ok\nauthor: me\nmetadata:\n  origin: somewhere\n---\n"
    findings = validate_skill(files_with(data), folder_name="a", policy_skills=policy_skills())
    assert [(f.rule, f.line) for f in findings] == [("skill.schema", 4), ("skill.schema", 6)]


def test_traversal_symlink_submodule_and_stray_files() -> None:
    files = files_with(
        GOOD,
        **{"../escape": (MODE_FILE, b"x"), "references/link": (MODE_SYMLINK, b"/etc/passwd"),
           "assets/sub": (MODE_SUBMODULE, b""), "notes.txt": (MODE_FILE, b"x"), "tool.sh": (MODE_EXECUTABLE, b"x"),
           "references/odd": (0o040000, b"")},
    )
    findings = validate_skill(files, folder_name="review-pr", policy_skills=policy_skills())
    assert rules(findings) == ["skill.executable", "skill.mode", "skill.path", "skill.path", "skill.path",
                               "skill.submodule", "skill.symlink"]
    assert [f.severity for f in findings if f.rule == "skill.executable"] == ["warning"]


def test_caps() -> None:
    caps = dict(policy_skills(), skill_md_max_bytes=len(GOOD) - 1, file_max_bytes=10, max_files=2)
    files = files_with(GOOD, references__big_md=(MODE_FILE, b"x" * 11), references__ok_md=(MODE_FILE, b"x" * 10))
    findings = validate_skill(files, folder_name="review-pr", policy_skills=caps)
    assert rules(findings) == ["skill.file-size", "skill.skill-md-size", "skill.too-many-files"]
    assert all(f.blocking for f in findings)


def test_long_description_is_a_warning() -> None:
    caps = dict(policy_skills(), description_recommended_chars=20)
    findings = validate_skill(files_with(GOOD), folder_name="review-pr", policy_skills=caps)
    assert rules(findings) == ["skill.description-length"]
    assert findings[0].severity == "warning" and findings[0].line == 3


def test_description_over_spec_limit_is_an_error() -> None:
    data = GOOD.replace(b"description: Review", b"description: " + b"x" * 1025 + b" Review")
    findings = validate_skill(files_with(data), folder_name="review-pr", policy_skills={})
    assert rules(findings) == ["skill.schema"]


def test_missing_caps_are_not_checked() -> None:
    files = files_with(GOOD, references__big=(MODE_FILE, b"x" * 10_000_000))
    assert validate_skill(files, folder_name="review-pr", policy_skills=None) == []


HERMES_FRONT = {
    "name": "github-code-review", "description": "Review PRs: diffs, inline comments via gh or REST.",
    "version": "1.1.0", "author": "Hermes Agent", "license": "MIT", "platforms": ["linux", "macos"],
    "required_environment_variables": [{"name": "GITHUB_TOKEN", "optional": True}],
    "metadata": {"hermes": {"tags": ["GitHub", "Code-Review"], "related_skills": ["github-auth"]}},
}


def test_conform_hermes_frontmatter() -> None:
    assert schema_problems(HERMES_FRONT)
    meta, notes = conform_frontmatter(HERMES_FRONT)
    assert schema_problems(meta) == []
    assert meta["license"] == "MIT" and "version" not in meta
    assert meta["metadata"] == {
        "version": "1.1.0", "author": "Hermes Agent", "platforms": "linux, macos",
        "required_environment_variables": '[{"name":"GITHUB_TOKEN","optional":true}]',
        "hermes.tags": "GitHub, Code-Review", "hermes.related_skills": "github-auth", "tags": "GitHub, Code-Review",
    }
    assert "moved version to metadata.version" in notes


def test_conformed_hermes_skill_validates() -> None:
    meta, _ = conform_frontmatter(HERMES_FRONT)
    skill = Skill(name=meta["name"], description=meta["description"], license=meta["license"], metadata=meta["metadata"],
                  body="# GitHub Code Review\n")
    files = {"SKILL.md": (MODE_FILE, serialise_skill_md(skill)), "references/github-rest-api.md": (MODE_FILE, b"# API\n")}
    assert validate_skill(files, folder_name="github-code-review", policy_skills=policy_skills(), category="github") == []


def test_conform_keeps_existing_tags_and_odd_values() -> None:
    meta, _ = conform_frontmatter({"name": "a", "description": "d", "tags": ["x,y"], "n": None, "ok": True, "v": 2,
                                   "metadata": {"tags": "mine", "empty": {}}})
    assert meta["metadata"] == {"tags": "mine", "frontmatter.tags": '["x,y"]', "n": "null", "ok": "true", "v": "2", "empty": "{}"}
    meta, notes = conform_frontmatter({"name": "a", "description": "d", "metadata": ["x"]})
    assert meta["metadata"] == {"metadata": "x"} and notes


# --- properties --------------------------------------------------------------------------------

names = st.from_regex(r"\A[a-z0-9]{1,10}(-[a-z0-9]{1,10}){0,3}\Z")
texts = st.text(st.characters(codec="utf-8"), max_size=60)
nonblank = texts.filter(lambda s: s.strip() != "")


@st.composite
def skills(draw: st.DrawFn) -> Skill:
    return Skill(
        name=draw(names),
        description=draw(nonblank.filter(lambda s: len(s) <= 1024)),
        license=draw(st.none() | texts.filter(bool)),
        compatibility=draw(st.none() | texts.filter(lambda s: 0 < len(s) <= 500)),
        metadata=draw(st.dictionaries(texts.filter(lambda k: k not in ("", "origin", "version")), texts, max_size=4))
        | draw(st.fixed_dictionaries({}, optional={"origin": st.sampled_from(["agent_inferred", "external_tool"]),
                                                   "version": st.from_regex(r"\A[0-9.]{1,8}\Z")})),
        allowed_tools=draw(st.none() | texts),
        body=draw(texts.filter(lambda s: "\x00" not in s)),
        category=draw(st.none() | names.filter(lambda n: n not in SPEC_DIRS)),
    )


@settings(max_examples=300, deadline=None)
@given(skills())
def test_skill_round_trip(skill: Skill) -> None:
    where = skill.path
    data = serialise_skill_md(skill)
    assert parse_skill_md(data, where) == skill
    assert serialise_skill_md(parse_skill_md(data, where)) == data


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300) | texts.map(lambda s: ("---\n" + s + "\n---\n").encode("utf-8", "surrogatepass")))
def test_arbitrary_bytes_raise_only_memrepo_errors(data: bytes) -> None:
    try:
        parse_skill_md(data, "skills/a/SKILL.md")
    except MemrepoError:
        pass
    validate_skill({"SKILL.md": (MODE_FILE, data)}, folder_name="a", policy_skills=policy_skills())


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_paths_raise_only_usage_errors(relpath: str) -> None:
    try:
        assert check_supporting_path(relpath) == relpath
    except UsageError:
        return
    assert ".." not in relpath.split("/") and not relpath.startswith("/") and "\\" not in relpath
    locate("skills/a/" + relpath)


yaml_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts | st.integers(), inner, max_size=3), max_leaves=10)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(texts | st.integers(), yaml_values, max_size=6))
def test_conform_never_raises_and_yields_string_metadata(meta: dict) -> None:
    out, _ = conform_frontmatter(dict(meta, name="a", description="d"))
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in out.get("metadata", {}).items())
