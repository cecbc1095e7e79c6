"""Find-and-replace that tolerates the ways an agent's copy of a text drifts from the file.

Strategies are tried from exact to loosest; the first that finds the old text wins:

1. ``exact``: the text as given.
2. ``line_endings``: CRLF, CR and LF are the same line break.
3. ``trailing_whitespace``: also ignore spaces and tabs at the ends of lines.
4. ``reindented``: whole lines with the same nesting at another depth or indentation unit.
5. ``line_trimmed``: whole lines equal once each is stripped (indentation ignored).
6. ``whitespace``: every run of whitespace, line breaks included, counts as one space.
7. ``unicode``: also fold compatibility forms (NFKD), smart quotes, dashes, odd spaces
   and zero-width characters.

Only the matched region changes: the text around it stays byte-identical. For
non-exact matches the replacement takes the file's line endings, and where the
match covers whole lines at another indentation the replacement is shifted to the
file's indentation. More than one match without ``replace_all`` raises
:class:`Ambiguous` with the candidates; no match raises :class:`NotFound`.
"""
from __future__ import annotations

import bisect
import difflib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import Ambiguous, NotFound, UsageError
from ..findings import escape_excerpt

_FOLD = {
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
}
_INVISIBLE = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_HSPACE = frozenset(" \t\f\v")
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")
_MAX_CANDIDATES_SHOWN = 10


@dataclass(frozen=True)
class FuzzyResult:
    """The new content, how many places were replaced, and which strategy matched."""

    content: str
    count: int
    strategy: str


@dataclass(frozen=True)
class _Match:
    start: int  # region replaced: [start, end)
    end: int
    new: str  # the replacement for this region


Items = list[tuple[str, int, int]]  # normalised character and the source span it came from
Finder = Callable[[str, str, str], list[_Match]]


def fuzzy_replace(content: str, old: str, new: str, *, replace_all: bool = False) -> FuzzyResult:
    """Replace ``old`` by ``new`` in ``content``, tolerating whitespace, indentation and Unicode drift.

    Raises UsageError for an empty or blank ``old`` or when ``old == new``; NotFound when
    no strategy matches (the hint names the closest line); Ambiguous when a strategy
    matches more than once and ``replace_all`` is false (``data['candidates']`` lists
    each place as ``{"line", "end_line", "column", "text", "context"}``: ``text`` is the
    matched text, ``context`` the whole lines holding it).
    """
    _check_arguments(old, new)
    for name, finder in STRATEGIES:
        matches = finder(content, old, new)
        if not matches:
            continue
        if len(matches) > 1 and not replace_all:
            raise _ambiguous(content, matches, name)
        return FuzzyResult(_apply(content, matches), len(matches), name)
    raise _not_found(content, old)


def _check_arguments(old: str, new: str) -> None:
    if not old.strip():
        raise UsageError("the old text is empty or only whitespace", where="patch",
                         hint="pass a distinctive piece of the current text as the old text")
    if old == new:
        raise UsageError("the old and new texts are identical", where="patch", hint="nothing to change")


def _apply(content: str, matches: list[_Match]) -> str:
    out, pos = [], 0
    for m in sorted(matches, key=lambda m: m.start):
        out.append(content[pos:m.start])
        out.append(m.new)
        pos = m.end
    out.append(content[pos:])
    return "".join(out)


# --- reporting ---------------------------------------------------------------------------------


def _line_starts(content: str) -> list[int]:
    return [m.start() for m in _LINE_RE.finditer(content)] or [0]


def _line_no(starts: list[int], offset: int) -> int:
    return bisect.bisect_right(starts, offset)


def _ambiguous(content: str, matches: list[_Match], strategy: str) -> Ambiguous:
    starts = _line_starts(content)
    candidates = [_candidate(content, starts, m) for m in matches]
    shown = [f"  line {c['line']}: {escape_excerpt(str(c['context']).strip(), 100)}" for c in candidates[:_MAX_CANDIDATES_SHOWN]]
    if len(candidates) > _MAX_CANDIDATES_SHOWN:
        shown.append(f"  ... and {len(candidates) - _MAX_CANDIDATES_SHOWN} more")
    what = f"the old text matches {len(matches)} places (strategy {strategy}):\n" + "\n".join(shown)
    return Ambiguous(what, where="patch", hint="add surrounding lines to the old text so it matches one place, or replace all",
                     data={"candidates": candidates, "strategy": strategy})


def _candidate(content: str, starts: list[int], m: _Match) -> dict[str, object]:
    """Where a match is: first and last line, column, the matched text and the whole lines around it."""
    line, end_line = _line_no(starts, m.start), _line_no(starts, max(m.start, m.end - 1))
    context_end = starts[end_line] if end_line < len(starts) else len(content)
    return {"line": line, "end_line": end_line, "column": m.start - starts[line - 1] + 1,
            "text": content[m.start:m.end], "context": content[starts[line - 1]:context_end].rstrip("\r\n")}


def _not_found(content: str, old: str) -> NotFound:
    hint = "view the file and copy the current text into the old text"
    data: dict[str, object] = {}
    closest = _closest_line(content, old)
    if closest:
        line, text = closest
        hint += f"; the closest line is {line}: {escape_excerpt(text, 80)}"
        data["closest"] = {"line": line, "text": text}
    return NotFound("the old text is not in the file, even ignoring whitespace, indentation and Unicode differences",
                    where="patch", hint=hint, data=data)


def _closest_line(content: str, old: str) -> tuple[int, str] | None:
    target = next((line.strip() for line in old.splitlines() if line.strip()), "")
    best, best_ratio = None, 0.5
    for i, (a, b) in enumerate(_line_spans(content)[:5000]):
        matcher = difflib.SequenceMatcher(None, target, content[a:b].strip(), autojunk=False)
        if matcher.real_quick_ratio() > best_ratio and matcher.quick_ratio() > best_ratio and matcher.ratio() > best_ratio:
            best, best_ratio = (i + 1, content[a:b]), matcher.ratio()
    return best


# --- shared helpers ----------------------------------------------------------------------------


def _eol_at(content: str, offset: int) -> str:
    """The line ending of the line holding ``offset`` (or the file's first), LF by default."""
    m = re.compile(r"\r\n|\r|\n").search(content, offset) or re.compile(r"\r\n|\r|\n").search(content)
    return m.group() if m else "\n"


def _with_eol(text: str, eol: str) -> str:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text if eol == "\n" else text.replace("\n", eol)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _first_indent(text: str) -> str:
    return next((_indent(line) for line in re.split(r"\r\n|\r|\n", text) if line.strip()), "")


def _core(text: str) -> str:
    """``text`` without leading blank lines and trailing whitespace (first line's indentation kept)."""
    lines = _LINE_RE.findall(text)
    while lines and not lines[0].strip():
        lines.pop(0)
    return "".join(lines).rstrip()


IndentPairs = list[tuple[str, str]]  # (indentation in the old text, indentation of the matching file line)


def _reindent(text: str, pairs: IndentPairs) -> str:
    """Move every non-blank line of ``text`` from the old text's indentation to the file's.

    An indentation seen in the match maps to its file counterpart; a deeper one maps
    through its longest known prefix; anything else shifts by the first line's difference.
    """
    mapping: dict[str, str] = {}
    for old_indent, file_indent in pairs:
        mapping.setdefault(old_indent, file_indent)
    if all(o == f for o, f in mapping.items()):
        return text
    return "\n".join(_reindent_line(line, mapping, pairs[0]) for line in text.split("\n"))


def _reindent_line(line: str, mapping: dict[str, str], base: tuple[str, str]) -> str:
    if not line.strip():
        return line
    lead = _indent(line)
    known = max((k for k in mapping if lead.startswith(k)), key=len, default=None)
    if known is not None:
        return mapping[known] + line[len(known):]
    old_base, file_base = base
    keep = max(0, len(file_base) - (len(old_base) - len(lead)))
    return file_base[:keep] + line[len(lead):]


def _whole_line_new(content: str, start: int, end: int, new: str, pairs: IndentPairs) -> _Match:
    """A match that covers whole lines from ``start`` (a line start): re-indent ``new``, keep the file's EOLs."""
    core = _core(new)
    if not core.strip():  # deleting the lines: take the line break too
        eol = re.compile(r"\r\n|\r|\n").match(content, end)
        return _Match(start, eol.end() if eol else end, "")
    return _Match(start, end, _with_eol(_reindent(core.replace("\r\n", "\n").replace("\r", "\n"), pairs),
                                        _eol_at(content, start)))


# --- character-level strategies (fragments allowed) --------------------------------------------


def _items(text: str) -> Items:
    return [(ch, i, i + 1) for i, ch in enumerate(text)]


def _unify_eol(items: Items) -> Items:
    out: Items = []
    after_cr = False
    for ch, a, b in items:
        if ch == "\n" and after_cr and out[-1][2] == a:
            out[-1] = ("\n", out[-1][1], b)
        else:
            out.append(("\n", a, b) if ch == "\r" else (ch, a, b))
        after_cr = ch == "\r"
    return out


def _drop_trailing_space(items: Items) -> Items:
    out: Items = []
    run: Items = []
    for item in items:
        if item[0] in _HSPACE:
            run.append(item)
            continue
        if item[0] != "\n":
            out.extend(run)
        run = []
        out.append(item)
    return out


def _collapse_space(items: Items) -> Items:
    out: Items = []
    for ch, a, b in items:
        if ch.isspace():
            if out and out[-1][0] == " " and out[-1][2] == a:
                out[-1] = (" ", out[-1][1], b)
                continue
            out.append((" ", a, b))
        else:
            out.append((ch, a, b))
    return out


def _fold_unicode(items: Items) -> Items:
    out: Items = []
    for ch, a, b in items:
        if ch in _INVISIBLE:
            continue
        for folded in unicodedata.normalize("NFKD", _FOLD.get(ch, ch)):
            out.append((folded, a, b))
    return out


def _char_finder(*steps: Callable[[Items], Items], strip: bool) -> Finder:
    def normalise(text: str) -> Items:
        items = _items(text)
        for step in steps:
            items = step(items)
        return items

    def find(content: str, old: str, new: str) -> list[_Match]:
        needle_text = old.strip() if strip else old
        needle = "".join(ch for ch, _, _ in normalise(needle_text))
        if not needle.strip():
            return []
        hay = normalise(content)
        spans = _find_spans("".join(ch for ch, _, _ in hay), needle, hay,
                            word_start=strip and old[:1].isspace(), word_end=strip and old[-1:].isspace())
        return [_char_match(content, a, b, old, new, strip) for a, b in spans]

    return find


def _find_spans(norm: str, needle: str, hay: Items, *, word_start: bool, word_end: bool) -> list[tuple[int, int]]:
    """Non-overlapping occurrences of ``needle`` mapped back to source offsets.

    An occurrence must not split a character that normalised into several, and
    where the old text started (ended) with whitespace it must start (end) at a word boundary.
    """
    spans: list[tuple[int, int]] = []
    i = norm.find(needle)
    while i >= 0:
        j = i + len(needle)
        ok = (i == 0 or hay[i - 1][1] != hay[i][1]) and (j == len(hay) or hay[j][1] != hay[j - 1][1])
        ok = ok and not (word_start and i > 0 and _wordish(norm[i - 1]) and _wordish(norm[i]))
        ok = ok and not (word_end and j < len(norm) and _wordish(norm[j]) and _wordish(norm[j - 1]))
        ok = ok and not (spans and hay[i][1] < spans[-1][1])
        if ok:
            spans.append((hay[i][1], hay[j - 1][2]))
            i = norm.find(needle, j)
        else:
            i = norm.find(needle, i + 1)
    return spans


def _wordish(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _char_match(content: str, start: int, end: int, old: str, new: str, stripped: bool) -> _Match:
    line_start = max(content.rfind("\n", 0, start), content.rfind("\r", 0, start)) + 1
    at_line_start = not content[line_start:start].strip(" \t")
    if stripped and at_line_start and (old[:1].isspace() or "\n" in old.strip() or "\r" in old.strip()):
        return _whole_line_new(content, line_start, end, new, [(_first_indent(old), content[line_start:start])])
    if stripped:
        new = new[len(new) - len(new.lstrip()):] if old[:1].isspace() else new
        new = new.rstrip() if old[-1:].isspace() else new
    return _Match(start, end, _with_eol(new, _eol_at(content, start)))


# --- line-window strategies (whole lines) ------------------------------------------------------


def _line_spans(text: str) -> list[tuple[int, int]]:
    """(start, end without line break) of each line."""
    return [(m.start(), m.start() + len(m.group().rstrip("\r\n"))) for m in _LINE_RE.finditer(text)]


def _ranked(lines: list[str]) -> list[tuple[int, str]]:
    """Each line stripped, with its depth as the rank of its indentation width among the block's.

    Equal for the same block at another depth or with another indentation unit (tabs for spaces).
    """
    widths = sorted({len(_indent(line)) for line in lines if line.strip()})
    return [(widths.index(len(_indent(line))), line.strip()) if line.strip() else (-1, "") for line in lines]


def _trimmed(lines: list[str]) -> list[tuple[int, str]]:
    return [(0, line.strip()) for line in lines]


def _line_finder(key: Callable[[list[str]], list[tuple[int, str]]]) -> Finder:
    def find(content: str, old: str, new: str) -> list[_Match]:
        old_lines = [old[a:b] for a, b in _line_spans(old)]
        while old_lines and not old_lines[0].strip():
            old_lines.pop(0)
        while old_lines and not old_lines[-1].strip():
            old_lines.pop()
        if not old_lines:
            return []
        want, spans = key(old_lines), _line_spans(content)
        lines = [content[a:b] for a, b in spans]
        first = old_lines[0].strip()
        matches, i, n = [], 0, len(old_lines)
        while i + n <= len(lines):
            if lines[i].strip() == first and key(lines[i:i + n]) == want:
                start, end = spans[i][0], spans[i + n - 1][1]
                pairs = [(_indent(o), _indent(f)) for o, f in zip(old_lines, lines[i:i + n]) if o.strip()]
                matches.append(_whole_line_new(content, start, end, new, pairs))
                i += n
            else:
                i += 1
        return matches

    return find


def _exact(content: str, old: str, new: str) -> list[_Match]:
    out, i = [], content.find(old)
    while i >= 0:
        out.append(_Match(i, i + len(old), new))
        i = content.find(old, i + len(old))
    return out


STRATEGIES: tuple[tuple[str, Finder], ...] = (
    ("exact", _exact),
    ("line_endings", _char_finder(_unify_eol, strip=False)),
    ("trailing_whitespace", _char_finder(_unify_eol, _drop_trailing_space, strip=False)),
    ("reindented", _line_finder(_ranked)),
    ("line_trimmed", _line_finder(_trimmed)),
    ("whitespace", _char_finder(_unify_eol, _collapse_space, strip=True)),
    ("unicode", _char_finder(_fold_unicode, _unify_eol, _collapse_space, strip=True)),
)
