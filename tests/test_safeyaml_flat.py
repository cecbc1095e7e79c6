"""The flat-frontmatter fast path reads exactly what the YAML parser reads, or steps aside."""
from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from memrepo.model.safeyaml import _load_flat, dump_yaml, load_yaml
from memrepo.model.safeyaml import _yaml as loaders

WORDS = st.sampled_from(["fact", "note", "yes", "No", "on", "OFF", "null", "NULL", "y", "n", "e3", "inf", "x-y_z",
                         "verified_manual", "m261129-abc", "True", "_x", "~", "007", "1_000", "0x1F", "1e3", ".5"])
SCALARS = st.one_of(
    WORDS,
    st.integers(min_value=-5, max_value=10**20).map(str),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12).map(lambda t: "'" + t.replace("'", "''") + "'"),
    st.text(max_size=12),
    st.lists(WORDS, max_size=3).map(lambda ws: "[" + ", ".join(ws) + "]"),
)
KEYS = st.one_of(st.sampled_from(["id", "ver", "on", "null", "tags", "Yes", "a_b"]), st.from_regex(r"[a-z_][a-z0-9_]{0,5}", fullmatch=True))


def _parse(text: str) -> object:
    try:
        return yaml.load(text, Loader=loaders().NoAliasLoader)
    except yaml.YAMLError:
        return "error"


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(KEYS, SCALARS), min_size=1, max_size=6))
def test_flat_path_agrees_with_yaml(pairs: list[tuple[str, str]]) -> None:
    text = "".join(f"{k}: {v}\n" for k, v in pairs)
    flat = _load_flat(text)
    if flat is not None:  # when it answers, it answers what YAML says
        assert flat == _parse(text)


def test_flat_path_reads_memrepos_own_frontmatter() -> None:
    text = ("id: m261129-abc\nkind: fact\ntype: note\nsource_type: user\nverification: verified\nttl: permanent\n"
            "tags: [deploy, t-1]\nupdated: '2026-11-29'\nver: 3\norigin: verified_manual\n")
    assert _load_flat(text) == _parse(text) == load_yaml(text, "x")
    assert _load_flat(text) is not None


def test_flat_path_steps_aside_for_yaml_specials() -> None:
    for text in ("a: yes\n", "on: x\n", "a: 007\n", "a: [no]\n", "a: b # c\n", "a: 2026-11-29\n", "a: 'x\u2028y'\n", "a: &x 1\n"):
        assert _load_flat(text) is None, text


VALUES = st.one_of(WORDS, st.integers(min_value=-10**18, max_value=10**18), st.booleans(), st.none(),
                   st.sampled_from(["2026-11-29", "2026-11-29T19:33:00Z", "2026-11-29T19:33:00", "2026-1-2", "a b", "it's", "", "30d", "x:y"]),
                   st.lists(WORDS, max_size=3), st.text(max_size=8))


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(KEYS, VALUES, min_size=1, max_size=6))
def test_dump_matches_pyyaml_byte_for_byte(meta: dict[str, object]) -> None:
    """Whatever the flat writer writes is exactly PyYAML's output, so entries written before and
    after it look the same in diffs; and it reads back as the same mapping."""
    expected = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=1 << 30, default_flow_style=None)
    assert dump_yaml(meta) == expected
    assert load_yaml(dump_yaml(meta), "x") == _parse(expected)
