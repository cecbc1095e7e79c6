"""The write path's fast schema check must agree with jsonschema (the judge) on every input."""
from __future__ import annotations

import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from memrepo.policy.config import default_policy
from memrepo.policy.fastschema import fast_validator

POLICY = default_policy()
FIELDS = {
    "id": st.one_of(st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_-]{0,70}", fullmatch=True), st.text(max_size=5)),
    "kind": st.sampled_from(["fact", "preference", "lesson", "nonsense", ""]),
    "type": st.one_of(st.from_regex(r"[a-z0-9_-]{0,45}", fullmatch=True), st.integers()),
    "source_type": st.sampled_from(["user", "agent", "tool", "web", "x"]),
    "verification": st.sampled_from(["pending", "verified", "maybe"]),
    "ttl": st.one_of(st.sampled_from(["permanent", "30d", "1y", "0d", "12"]), st.text(max_size=4)),
    "tags": st.one_of(st.lists(st.from_regex(r"[\w][\w.:/-]{0,45}", fullmatch=True), max_size=18), st.text(max_size=3)),
    "updated": st.sampled_from(["2026-01-01", "2026-01-01T00:00:00Z", "yesterday", ""]),
    "ver": st.one_of(st.integers(min_value=-2, max_value=5), st.floats(allow_nan=False), st.booleans()),
    "origin": st.sampled_from(["verified_manual", "agent_inferred", "external_tool", "web"]),
}


@st.composite
def frontmatter(draw: st.DrawFn) -> dict[str, object]:
    keys = draw(st.sets(st.sampled_from(sorted(FIELDS)), min_size=7))
    out = {k: draw(FIELDS[k]) for k in keys}
    if draw(st.booleans()):
        out[draw(st.sampled_from(["extra", "scope", "note"]))] = "x"
    return out


@settings(max_examples=400, deadline=None)
@given(frontmatter())
def test_fast_memory_validator_agrees_with_jsonschema(meta):
    fast = fast_validator(POLICY.schema("memory"))
    assert fast is not None
    assert fast(meta) == Draft202012Validator(POLICY.schema("memory")).is_valid(meta)


def test_policy_file_validates_both_ways():
    fast = fast_validator(POLICY.schema("policy"))
    assert fast is not None and fast(POLICY.data) is True
    broken = dict(POLICY.data, version=2)
    assert fast(broken) is False and POLICY.schema_errors("policy", broken)


def test_valid_write_path_does_not_import_jsonschema(tmp_path):
    code = ("import sys; from memrepo.policy.config import default_policy; p = default_policy(); "
            "p.schema_errors('memory', {'id': 'a', 'kind': 'fact', 'type': 'memory', 'source_type': 'agent', "
            "'verification': 'pending', 'ttl': 'permanent', 'tags': [], 'updated': '2026-01-01', 'ver': 1, "
            "'origin': 'agent_inferred'}); print('jsonschema' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


SKILL_FIELDS = {
    "name": st.one_of(st.from_regex(r"[a-z0-9]{1,8}(-[a-z0-9]{1,8}){0,3}", fullmatch=True),
                      st.sampled_from(["", "Bad_Name", "-x", "a--b", "x" * 65]), st.integers()),
    "description": st.one_of(st.text(max_size=30), st.just("   "), st.just("d" * 1025), st.none()),
    "license": st.one_of(st.sampled_from(["MIT", ""]), st.integers()),
    "compatibility": st.one_of(st.text(max_size=10), st.just("c" * 501)),
    "metadata": st.one_of(st.dictionaries(st.sampled_from(["version", "origin", "tags", "x", ""]),
                                          st.one_of(st.sampled_from(["1.0.0", "agent_inferred", "web", "", "a, b"]),
                                                    st.integers(), st.booleans()), max_size=4),
                          st.text(max_size=3)),
    "allowed-tools": st.one_of(st.just("Bash Read"), st.integers()),
    "version": st.just("1.0"),
}


@st.composite
def skill_frontmatter(draw: st.DrawFn) -> dict[str, object]:
    keys = draw(st.sets(st.sampled_from(sorted(SKILL_FIELDS)), min_size=1))
    return {k: draw(SKILL_FIELDS[k]) for k in keys}


@settings(max_examples=400, deadline=None)
@given(skill_frontmatter())
def test_fast_skill_validator_agrees_with_jsonschema(meta):
    """check skips jsonschema for SKILL.md frontmatter the fast check calls valid: it must agree."""
    from memrepo.model.skill import default_skill_schema

    fast = fast_validator(default_skill_schema())
    assert fast is not None
    assert fast(meta) == Draft202012Validator(default_skill_schema()).is_valid(meta)
