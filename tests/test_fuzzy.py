"""fuzzy_replace: exact to loose matching, byte-identical surroundings, candidates on ambiguity."""
from __future__ import annotations

from typing import Any, cast

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memrepo.errors import Ambiguous, MemrepoError, NotFound, UsageError
from memrepo.model.fuzzy import fuzzy_replace

SKILL = """---
name: deploy
description: Deploy the service.
---
# Deploy

1. Build the image:
    ```
    docker build -t app .
    ```
2. Push it — don't forget the tag.
3. Run "make release".
"""


def test_exact_single_match() -> None:
    result = fuzzy_replace(SKILL, "Deploy the service.", "Deploy the web service.")
    assert result.strategy == "exact" and result.count == 1
    assert result.content == SKILL.replace("Deploy the service.", "Deploy the web service.")


def test_exact_match_keeps_new_verbatim() -> None:
    result = fuzzy_replace("a\r\nb\r\n", "a\r\n", "x\n")
    assert result.content == "x\nb\r\n" and result.strategy == "exact"


def test_ambiguous_match_lists_candidates() -> None:
    content = "step: build\nother\nstep: build\n"
    with pytest.raises(Ambiguous) as info:
        fuzzy_replace(content, "step: build", "step: test")
    err = info.value
    candidates = cast(list[dict[str, Any]], err.data["candidates"])
    assert [c["line"] for c in candidates] == [1, 3]
    assert all(c["text"] == "step: build" and c["context"] == "step: build" for c in candidates)
    assert "line 1: step: build" in err.what and "line 3: step: build" in err.what
    assert "2 places" in err.what and "replace all" in err.hint
    assert err.to_json()["candidates"] == candidates


def test_ambiguous_candidates_show_whole_lines() -> None:
    content = "alpha foo beta\ngamma foo delta\n"
    with pytest.raises(Ambiguous) as info:
        fuzzy_replace(content, "foo", "bar")
    candidates = cast(list[dict[str, Any]], info.value.data["candidates"])
    assert [(c["line"], c["column"], c["context"]) for c in candidates] == [
        (1, 7, "alpha foo beta"), (2, 7, "gamma foo delta")]


def test_replace_all() -> None:
    result = fuzzy_replace("a foo b foo c", "foo", "bar", replace_all=True)
    assert result.content == "a bar b bar c" and result.count == 2


def test_not_found_names_closest_line() -> None:
    with pytest.raises(NotFound) as info:
        fuzzy_replace(SKILL, "Push it, then forget the tag", "x")
    assert "closest line is 11" in info.value.hint
    assert cast(dict[str, Any], info.value.data["closest"])["line"] == 11


def test_not_found_without_anything_close() -> None:
    with pytest.raises(NotFound) as info:
        fuzzy_replace("alpha\nbeta\n", "zzzzzz qqq", "x")
    assert "closest" not in info.value.data


@pytest.mark.parametrize("old, new", [("", "x"), ("  \n\t", "x"), ("same", "same")])
def test_bad_arguments(old: str, new: str) -> None:
    with pytest.raises(UsageError):
        fuzzy_replace("same text", old, new)


@pytest.mark.parametrize("content, old, new, strategy, expected", [
    pytest.param("one\r\ntwo\r\nthree\r\n", "one\ntwo\n", "uno\ndos\n", "line_endings", "uno\r\ndos\r\nthree\r\n",
                 id="crlf-file-keeps-crlf"),
    pytest.param("keep\nfirst line   \nsecond\t\nkeep\n", "first line\nsecond", "changed\nlines", "trailing_whitespace",
                 "keep\nchanged\nlines\t\nkeep\n", id="trailing-spaces"),  # the tab after the match is not part of it
    pytest.param("def f():\n    if x:\n        y()\n    return 1\n", "if x:\n    y()\n", "if x:\n    z()\n    w()\n",
                 "reindented", "def f():\n    if x:\n        z()\n        w()\n    return 1\n", id="reindent-deeper"),
    pytest.param("items:\n  - a\n  - b\nend\n", "        - a\n        - b", "        - a\n        - c\n          note",
                 "reindented", "items:\n  - a\n  - c\n    note\nend\n", id="reindent-shallower"),
    pytest.param("root:\n\tfirst\n\t\tsecond\n", "    first\n        second", "    first\n        changed", "reindented",
                 "root:\n\tfirst\n\t\tchanged\n", id="tabs-for-spaces"),
    pytest.param("run  the   build    now\n", "run the build", "start the build", "whitespace", "start the build    now\n",
                 id="collapsed-spaces"),
])
def test_tolerant_strategies(content: str, old: str, new: str, strategy: str, expected: str) -> None:
    result = fuzzy_replace(content, old, new)
    assert (result.strategy, result.content, result.count) == (strategy, expected, 1)


def test_line_trimmed_ignores_mixed_indentation() -> None:
    content = "root\n\tfirst\n    second\nend\n"
    result = fuzzy_replace(content, "first\nsecond", "FIRST\nSECOND")
    assert result.strategy in ("line_trimmed", "whitespace")
    assert result.content.startswith("root\n") and result.content.endswith("\nend\n")
    assert "FIRST" in result.content and "SECOND" in result.content


def test_whitespace_strategy_respects_word_boundaries() -> None:
    with pytest.raises(NotFound):
        fuzzy_replace("max  = 10\n", "  x = 1\n", "y = 2\n")


def test_smart_quotes_and_dashes() -> None:
    result = fuzzy_replace(SKILL, "2. Push it - don't forget the tag.", "2. Push it and tag it.")
    assert result.strategy == "unicode"
    assert "2. Push it and tag it.\n3. Run" in result.content
    assert result.content.replace("2. Push it and tag it.", "") == SKILL.replace("2. Push it — don't forget the tag.", "")


def test_nfkc_compatibility_forms() -> None:
    content = "the ﬁle … is ｆｕｌｌ\u00a0width\n"
    result = fuzzy_replace(content, "the file ... is full width", "done")
    assert result.strategy == "unicode" and result.content == "done\n"


def test_zero_width_characters_ignored() -> None:
    result = fuzzy_replace("a pass\u200bword here\n", "password", "secret")
    assert result.content == "a secret here\n"


def test_deleting_lines_takes_their_line_break() -> None:
    content = "keep\n    drop me\n    and me\nend\n"
    result = fuzzy_replace(content, "drop me\nand me", "")
    assert result.content == "keep\nend\n"


def test_surroundings_stay_byte_identical() -> None:
    content = "α\r\n  “quoted”  \r\n\tβ\r\n"
    result = fuzzy_replace(content, '"quoted"', "plain")
    assert result.content == "α\r\n  plain  \r\n\tβ\r\n"


# --- properties --------------------------------------------------------------------------------

words = st.text(st.characters(codec="utf-8"), max_size=30)


@settings(max_examples=300, deadline=None)
@given(prefix=words, old=words, suffix=words, new=words)
def test_unique_exact_match_changes_only_the_match(prefix: str, old: str, suffix: str, new: str) -> None:
    content = prefix + old + suffix
    assume(old.strip() and old != new and content.count(old) == 1)
    result = fuzzy_replace(content, old, new)
    assert result == type(result)(prefix + new + suffix, 1, "exact")


@settings(max_examples=300, deadline=None)
@given(before=st.lists(st.from_regex(r"\A[a-z]{1,8}\Z"), max_size=3), block=st.lists(st.from_regex(r"\A[a-z]{3,8}\Z"), min_size=1, max_size=3, unique=True),
       after=st.lists(st.from_regex(r"\A[a-z]{1,8}\Z"), max_size=3), indent=st.sampled_from(["  ", "    ", "\t"]),
       eol=st.sampled_from(["\n", "\r\n"]))
def test_reindented_patch_keeps_surroundings(before: list[str], block: list[str], after: list[str], indent: str, eol: str) -> None:
    head = "".join(f"{w}{eol}" for w in ["BEGIN", *before])
    tail = "".join(f"{w}{eol}" for w in [*after, "END"])
    body = "".join(f"{indent}{w}{eol}" for w in block)
    content = head + body + tail
    assume(content.count(block[0]) == 1)
    old = "\n".join(block) + "\n"
    new = "\n".join(w.upper() for w in block) + "\n"
    result = fuzzy_replace(content, old, new)
    assert result.content == head + "".join(f"{indent}{w.upper()}{eol}" for w in block) + tail


@settings(max_examples=400, deadline=None)
@given(content=words, old=words, new=words, replace_all=st.booleans())
def test_arbitrary_input_raises_only_memrepo_errors(content: str, old: str, new: str, replace_all: bool) -> None:
    try:
        result = fuzzy_replace(content, old, new, replace_all=replace_all)
    except MemrepoError:
        return
    assert result.count >= 1 and isinstance(result.content, str)
