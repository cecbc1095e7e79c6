"""Hermes MEMORY.md / USER.md (§ entries) and Agent OS one-line entries: parse, serialise, round trips."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memrepo.errors import MemrepoError, ParseError, UsageError
from memrepo.model.agentos import parse_agentos, parse_agentos_line, serialise_agentos, serialise_agentos_file
from memrepo.model.entry import Entry
from memrepo.model.hermes import ENTRY_DELIMITER, hermes_entry_problem, parse_hermes, parse_hermes_file, serialise_hermes

# --- Hermes ------------------------------------------------------------------------------------


def test_delimiter_is_hermes_agents() -> None:
    assert ENTRY_DELIMITER == "\n§\n"


def test_serialise_matches_hermes_bytes() -> None:
    text = serialise_hermes(["User prefers tabs.", "Project uses\nuv, not pip."])
    assert text == "User prefers tabs.\n§\nProject uses\nuv, not pip."
    assert serialise_hermes([]) == ""


def test_parse_as_hermes_reads() -> None:
    raw = "\ufeff  first  \r\n§\r\n\n§\nsecond\nline\n§\n§ inline § stays\n"
    assert parse_hermes(raw) == ["first", "second\nline", "§ inline § stays"]
    assert parse_hermes("") == [] and parse_hermes("\n§\n") == []


def test_parse_file_refuses_binary() -> None:
    with pytest.raises(ParseError):
        parse_hermes_file(b"a\x00b", "MEMORY.md")
    assert parse_hermes_file("a\n§\nb".encode(), "MEMORY.md") == ["a", "b"]


@pytest.mark.parametrize("entry", ["", "  ", " padded", "padded\n", "a\r\nb", "a\n§\nb", "trail\n§", 3])
def test_serialise_refuses_entries_hermes_would_change(entry: object) -> None:
    assert hermes_entry_problem(entry)
    with pytest.raises(UsageError) as info:
        serialise_hermes(["ok", entry, "ok"])  # type: ignore[list-item]
    assert info.value.where == "entry 2"


def test_delimiter_lookalikes_that_hermes_reads_back() -> None:
    assert serialise_hermes(["§\nfirst", "middle", "last\n§"]) == "§\nfirst\n§\nmiddle\n§\nlast\n§"
    assert parse_hermes("§\nfirst\n§\nmiddle\n§\nlast\n§") == ["§\nfirst", "middle", "last\n§"]


hermes_pieces = st.characters(codec="utf-8") | st.sampled_from(["§", "\n", "\n§", "§\n", " "])
hermes_entries = st.lists(st.lists(hermes_pieces, min_size=1, max_size=20).map("".join), max_size=6).filter(
    lambda es: all(not hermes_entry_problem(e, last=i == len(es) - 1) for i, e in enumerate(es)))


@settings(max_examples=400, deadline=None)
@given(hermes_entries)
def test_hermes_round_trip(entries: list[str]) -> None:
    text = serialise_hermes(entries)
    assert parse_hermes(text) == entries
    assert serialise_hermes(parse_hermes(text)) == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80) | st.lists(st.sampled_from(["a", " ", "\n", "§", "\r"]), max_size=20).map("".join))
def test_hermes_arbitrary_text_parses_and_writes_back_or_refuses(text: str) -> None:
    entries = parse_hermes(text)
    try:
        written = serialise_hermes(entries)
    except UsageError:
        # e.g. '0\n§ \n§\n0' reads as ['0\n§', '0'], which Hermes itself would write back as two other entries
        return
    assert parse_hermes(written) == entries


# --- Agent OS ----------------------------------------------------------------------------------

ENTRY = Entry(id="m261129-abc123", text="Deploys go through `make release`.", scope="memory", kind="convention",
              type="project", source_type="user", verification="verified", ttl="6m", tags=("deploy", "make"),
              updated="2026-11-29T10:00:00Z", ver=2, origin="verified_manual")


def test_serialise_agentos_line() -> None:
    assert serialise_agentos(ENTRY) == ("[m261129-abc123|convention|project|user|verified|6m|deploy,make|"
                                        "2026-11-29T10:00:00Z|2|verified_manual] Deploys go through `make release`.")


def test_parse_agentos_line() -> None:
    line = "[m1|fact|env|tool|pending|30d|a,b|2026-01-02|1|external_tool] Node 22 is installed | really ]"
    entry = parse_agentos_line(line + "\r\n", "in:1", scope="knowledge")
    assert entry == Entry(id="m1", text="Node 22 is installed | really ]", scope="knowledge", kind="fact", type="env",
                          source_type="tool", verification="pending", ttl="30d", tags=("a", "b"), updated="2026-01-02",
                          ver=1, origin="external_tool")


def test_multiline_content_and_special_characters_round_trip() -> None:
    entry = ENTRY.with_(text="line one\nline two | with ] and \\ and \\n literally\r\n\u2028end  ",
                        tags=("a,b", "c|d", "e]f", "g\\h"), type="we|ird]")
    line = serialise_agentos(entry)
    assert "\n" not in line and "\r" not in line and "\u2028" not in line
    assert not line.endswith(" ")
    assert parse_agentos_line(line, "x") == entry


def test_empty_content_and_no_tags() -> None:
    entry = ENTRY.with_(text="", tags=())
    line = serialise_agentos(entry)
    assert line.endswith("||2026-11-29T10:00:00Z|2|verified_manual]".replace("||", "||"))
    assert parse_agentos_line(line, "x") == entry
    assert parse_agentos_line(line + " ", "x") == entry


def test_parse_file_skips_blanks_and_comments() -> None:
    text = "\ufeff# exported by memrepo\n\n" + serialise_agentos_file([ENTRY, ENTRY.with_(id="m2", text="x\ny")]) + "\r\n"
    entries = parse_agentos(text, "agentos.txt", scope="user")
    assert [e.id for e in entries] == ["m261129-abc123", "m2"]
    assert entries[1].text == "x\ny" and all(e.scope == "user" for e in entries)


@pytest.mark.parametrize("line, fragment", [
    ("m1|fact] x", "starts with '['"),
    ("[m1|fact|type|src|pending|ttl|tags|upd|1|origin x", "not closed"),
    ("[m1|fact|type] x", "3 fields"),
    ("[m1|a|b|c|d|e|f|g|h|i|j] x", "11 fields"),
    ("[m1|fact|type|src|pending|ttl||upd|one|origin] x", "not a whole number"),
    ("[../x|fact|type|src|pending|ttl||upd|1|origin] x", "invalid entry id"),
    ("[|fact|type|src|pending|ttl||upd|1|origin] x", "invalid entry id"),
    ("[m1|fact|type|src|pending|ttl||upd|1|origin] bad \\q escape", "unknown escape"),
    ("[m1|fact|type|src|pending|ttl||upd|1|origin] trailing \\", "unknown escape"),
    ("[m1|fact|type|src|pending|ttl||upd|1|origin] \\u12", "unknown escape"),
])
def test_parse_agentos_refuses_bad_lines(line: str, fragment: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_agentos("# header\n" + line, "f.txt")
    assert fragment in info.value.what
    assert info.value.where == "f.txt:2"


def test_serialise_refuses_unsafe_id_and_empty_tag() -> None:
    with pytest.raises(UsageError):
        serialise_agentos(ENTRY.with_(id="a/b"))
    with pytest.raises(UsageError):
        serialise_agentos(ENTRY.with_(tags=("",)))


field_text = st.text(st.characters(codec="utf-8"), max_size=20)
entries = st.builds(
    Entry,
    id=st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9_-]{0,20}\Z"),
    text=st.text(st.characters(codec="utf-8"), max_size=80),
    scope=st.just("memory"),
    kind=field_text, type=field_text, source_type=field_text, verification=field_text, ttl=field_text,
    tags=st.lists(field_text.filter(bool), max_size=4).map(tuple),
    updated=field_text, ver=st.integers(min_value=-10, max_value=10**9), origin=field_text,
)


@settings(max_examples=400, deadline=None)
@given(entries)
def test_agentos_line_round_trip(entry: Entry) -> None:
    line = serialise_agentos(entry)
    assert "\n" not in line and "\r" not in line and len(line.splitlines()) == 1
    assert parse_agentos_line(line, "x") == entry
    assert serialise_agentos(parse_agentos_line(line, "x")) == line


@settings(max_examples=200, deadline=None)
@given(st.lists(entries, max_size=5))
def test_agentos_file_round_trip(items: list[Entry]) -> None:
    assert parse_agentos(serialise_agentos_file(items)) == items


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=80) | st.lists(st.sampled_from(["[", "]", "|", "\\", "u", "0", "a", "\n", ",", " ", "#"]),
                                        max_size=40).map("".join))
def test_agentos_arbitrary_input_raises_only_parse_errors(text: str) -> None:
    try:
        parse_agentos(text)
    except ParseError:
        pass
    try:
        parse_agentos_line(text, "x")
    except MemrepoError:
        pass
