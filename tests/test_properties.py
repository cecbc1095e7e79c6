"""Property tests for the parsers and serialisers that read untrusted files.

parse(serialise(x)) == x, and arbitrary input raises nothing but memrepo's own MemrepoError.
Entry frontmatter and policy files are covered thoroughly here; SKILL.md, Hermes § files and
Agent OS lines have their round trips in test_skill_model.py / test_interop_formats.py, so only
the file-level doors they leave open are covered here.
"""
from __future__ import annotations

import json

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from memrepo.errors import MemrepoError
from memrepo.model.entry import ID_RE, ORIGINS, Entry, entry_path, parse_entry, serialise_entry
from memrepo.policy.config import load_policy
from memrepo.resources import default_policy_files

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# any text a file can hold: no NUL (binary), no lone surrogates (not UTF-8)
file_text = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=120)
words = st.text(st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\x00"), min_size=0, max_size=24)
ids = st.from_regex(ID_RE, fullmatch=True)
scopes = st.sampled_from(["memory", "user", "knowledge"])


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    return Entry(
        id=draw(ids), text=draw(file_text.filter(lambda t: t.strip() != "" or t == "")), scope=draw(scopes),
        kind=draw(words), type=draw(words), source_type=draw(words), verification=draw(words), ttl=draw(words),
        tags=tuple(draw(st.lists(words, max_size=4))), updated=draw(words), ver=draw(st.integers(0, 2**31)),
        origin=draw(st.sampled_from(ORIGINS) | words),
    )


@FAST
@given(entries())
def test_entry_round_trip(entry: Entry) -> None:
    path = entry_path(entry.scope, entry.id, fanout=entry.scope == "knowledge")
    data = serialise_entry(entry)
    assert parse_entry(data, path) == entry
    assert serialise_entry(parse_entry(data, path)) == data  # deterministic


@FAST
@given(entries(), st.dictionaries(st.from_regex(r"[a-z_]{1,12}", fullmatch=True).filter(lambda k: k not in Entry.__dataclass_fields__),
                                  st.recursive(st.none() | st.booleans() | st.integers() | words,
                                               lambda kids: st.lists(kids, max_size=3) | st.dictionaries(words, kids, max_size=3),
                                               max_leaves=8), max_size=3))
def test_entry_extra_fields_round_trip(entry: Entry, extra: dict[str, object]) -> None:
    entry = entry.with_(extra=extra)
    back = parse_entry(serialise_entry(entry), entry_path(entry.scope, entry.id))
    assert back == entry and back.extra == extra


def _only_memrepo_errors(fn, *args) -> None:  # type: ignore[no-untyped-def]
    try:
        fn(*args)
    except MemrepoError as exc:
        assert exc.what and isinstance(exc.where, str)


@FAST
@given(st.binary(max_size=400))
def test_entry_arbitrary_bytes(data: bytes) -> None:
    _only_memrepo_errors(parse_entry, data, "memories/memory/x.md")
    _only_memrepo_errors(parse_entry, b"---\n" + data + b"\n---\nbody\n", "memories/memory/x.md")


yaml_ish = st.lists(st.sampled_from(["a", ":", " ", "\n", "-", "[", "]", "{", "}", "&x", "*x", "!!", "!!python/object:os.system",
                                     "'", '"', "#", "|", ">", "?", ",", "%YAML 1.2", "---", "...", "\t", "1", "2026-01-01",
                                     "ver", "tags", "id", "~", "null", ".inf", "0x1F", "<<"]), max_size=40).map("".join)


@FAST
@given(yaml_ish, file_text)
def test_entry_hostile_frontmatter(front: str, body: str) -> None:
    """Frontmatter built from YAML's sharp edges: anchors, tags, merges, flow and block nesting."""
    _only_memrepo_errors(parse_entry, f"---\n{front}\n---\n{body}\n".encode(), "memories/user/y.md")


@FAST
@given(st.dictionaries(st.sampled_from(["id", "kind", "tags", "ver", "origin", "updated", "ttl"]),
                       st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | words,
                                    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(words, kids, max_size=3),
                                    max_leaves=6), max_size=7))
@example({"ver": float("inf")})  # int(inf) raised OverflowError, a traceback instead of a ParseError
@example({"ver": float("-inf")})
def test_entry_fields_of_any_type(meta: dict[str, object]) -> None:
    """Well-formed YAML whose field values have the wrong types: a ParseError, or an Entry of strings."""
    data = ("---\n" + yaml.safe_dump(meta, allow_unicode=True) + "---\nbody\n").encode()
    try:
        e = parse_entry(data, "memories/memory/x.md")
    except MemrepoError:
        return
    assert isinstance(e.ver, int) and all(isinstance(t, str) for t in e.tags) and isinstance(e.id, str)


# -- policy files ------------------------------------------------------------------------------
DEFAULT_FILES = default_policy_files()
DEFAULT_DATA = yaml.safe_load(DEFAULT_FILES["policy.yaml"])
scope_names = st.from_regex(r"[a-z][a-z0-9_-]{0,31}", fullmatch=True)


@st.composite
def policies(draw: st.DrawFn) -> dict[str, object]:
    """Valid policy data: the default with scopes, caps, reviewers and switches redrawn."""
    data = json.loads(json.dumps(DEFAULT_DATA))
    data["scopes"] = draw(st.dictionaries(scope_names, st.fixed_dictionaries(
        {}, optional={"cap": st.none() | st.integers(1, 10**6), "entry_cap": st.none() | st.integers(1, 10**5),
                      "render": st.booleans(), "fanout": st.booleans(), "title": words}), min_size=1, max_size=4))
    data["entry"] = {"max_chars": draw(st.integers(1, 10**5))}
    data["review"] = {"reviewers": draw(st.lists(words, max_size=3)), "policy_owners": draw(st.lists(words, max_size=2))}
    data["durability"] = {"fsync": draw(st.booleans())}
    return data  # type: ignore[no-any-return]


@FAST
@given(policies())
def test_policy_round_trip(data: dict[str, object]) -> None:
    files = dict(DEFAULT_FILES, **{"policy.yaml": yaml.safe_dump(data, allow_unicode=True).encode()})
    policy = load_policy(files)
    assert policy.data == data
    assert set(policy.scopes) == set(data["scopes"])  # type: ignore[arg-type]
    for name, spec in policy.scopes.items():
        assert spec.cap == (data["scopes"][name] or {}).get("cap")  # type: ignore[index]


@FAST
@given(st.binary(max_size=400) | yaml_ish.map(str.encode))
def test_policy_arbitrary_bytes(data: bytes) -> None:
    _only_memrepo_errors(load_policy, dict(DEFAULT_FILES, **{"policy.yaml": data}))


@FAST
@given(policies(), st.sampled_from(["version", "branches", "scopes", "entry", "review", "scan", "skills", "durability"]),
       st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | words,
                    lambda kids: st.lists(kids, max_size=3) | st.dictionaries(words, kids, max_size=3), max_leaves=6))
def test_policy_sections_of_any_shape(data: dict[str, object], key: str, value: object) -> None:
    """A policy whose section holds any value: refused with a ParseError naming the field, or usable."""
    data[key] = value
    files = dict(DEFAULT_FILES, **{"policy.yaml": yaml.safe_dump(data, allow_unicode=True).encode()})
    try:
        policy = load_policy(files)
    except MemrepoError as exc:
        assert "policy" in exc.what and exc.hint
        return
    # what validated must be usable without a crash
    _ = (policy.scopes, policy.verified_branch, policy.reviewers, policy.entry_max_chars, policy.section("durability"))
    for name in policy.scopes:
        policy.entry_cap(name)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])  # each builds a scanner
@given(st.sampled_from(sorted(k for k in DEFAULT_FILES if k.startswith(("schemas/", "rules/"))
                            and k != "schemas/rules.schema.json")),
       st.binary(max_size=200) | yaml_ish.map(str.encode))
def test_policy_schema_and_rule_files_of_any_content(name: str, data: bytes) -> None:
    """A broken schema or rule file is a MemrepoError when the policy or its scanner is built."""
    assume(data != DEFAULT_FILES[name])
    _only_memrepo_errors(_build_policy_and_scanner, name, data)


def _build_policy_and_scanner(name: str, data: bytes) -> None:
    policy = load_policy(dict(DEFAULT_FILES, **{name: data}))
    policy.validator("memory")
    policy.scanner()


@pytest.mark.parametrize("data", [b"", b"\x80", b"0\x01", b'{"type": 5}'])
def test_rules_schema_file_of_any_content(data: bytes) -> None:
    _only_memrepo_errors(_build_policy_and_scanner, "schemas/rules.schema.json", data)


# -- the other formats, lightly (their round trips live in test_skill_model / test_interop_formats) --

@FAST
@given(st.binary(max_size=300))
def test_hermes_file_bytes(data: bytes) -> None:
    from memrepo.model.hermes import parse_hermes_file, serialise_hermes

    try:
        entries = parse_hermes_file(data, "MEMORY.md")
    except MemrepoError:
        return
    assert parse_hermes_file(serialise_hermes(entries).encode(), "MEMORY.md") == entries


@FAST
@given(yaml_ish, file_text)
def test_skill_md_hostile_frontmatter(front: str, body: str) -> None:
    from memrepo.model.skill import parse_skill_md

    _only_memrepo_errors(parse_skill_md, f"---\n{front}\n---\n{body}".encode(), "skills/s/SKILL.md")


@FAST
@given(st.binary(max_size=200))
def test_agentos_file_bytes(data: bytes) -> None:
    from memrepo.model.agentos import parse_agentos
    from memrepo.model.text import decode_utf8

    def parse() -> None:
        parse_agentos(decode_utf8(data, "agentos.txt"), "agentos.txt")

    _only_memrepo_errors(parse)
