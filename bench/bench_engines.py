"""Could another regex engine take the rule patterns' pass under the 1 ms target? Measured here.

The scanner gates each pattern on its required literals (one Aho-Corasick pass), then runs ``re``
at the candidate positions: on a 1 KB entry about 80 patterns pass their gates and the rules'
share of a scan is ~0.8 ms, mostly Python calls. A multi-pattern engine could say in one C pass
which patterns can match, leaving ``re`` only those. This script translates every rule and
feature pattern to a superset the engine accepts (look-arounds, anchors and ``\\b`` dropped,
``\\w``/``\\d``/``\\s`` widened to any non-ASCII character, counted repeats over 3 unbounded),
builds one set per engine and times it on 1 KB entries it has never seen (built from held-out
sets, no text used twice) and then on the same entries again, beside memrepo's whole scan.

Run: python bench/bench_engines.py [--entries N]   (engines not installed are skipped:
``pip install google-re2 hyperscan``). Prints figures; asserts nothing.
"""
from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from re import _constants as C
from re import _parser as P
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
MAX_COUNT = 3  # counted repeats above this become unbounded: copies multiply automaton states

_ANY = r"(?s:.)"
_NON_ASCII = r"\x{80}-\x{10ffff}"
_CLASSES = {C.CATEGORY_DIGIT: "0-9" + _NON_ASCII, C.CATEGORY_WORD: "0-9A-Za-z_" + _NON_ASCII,
            C.CATEGORY_SPACE: r"\t\n\x{0b}\f\r\x{1c}-\x{20}" + _NON_ASCII, C.CATEGORY_NOT_SPACE: r"\S"}
_META = frozenset("\\.^$|?*+()[]{}-/#&~")


def superset(source: str, flags: int = 0) -> str:
    """A pattern (RE2 and Hyperscan syntax) matching every text in which ``source`` matches somewhere."""
    tree = P.parse(source, flags)
    prefix = _letters(tree.state.flags, 0)
    return ("(?" + prefix + ")" if prefix else "") + _emit(tree)


def _letters(add: int, remove: int) -> str:
    def of(bits: int) -> str:
        return "".join(c for c, b in (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL)) if bits & b)
    return of(add) + ("-" + of(remove) if of(remove) else "")


def _lit(code: int) -> str:
    ch = chr(code)
    if code < 0x20 or 0x7F <= code < 0xA0:
        return f"\\x{{{code:x}}}"
    return "\\" + ch if ch in _META else ch


def _class(items: Sequence[tuple[Any, Any]]) -> str:
    negated = any(op is C.NEGATE for op, _ in items)
    parts = []
    for op, arg in items:
        if op is C.LITERAL:
            parts.append(_lit(arg))
        elif op is C.RANGE:
            parts.append(_lit(arg[0]) + "-" + _lit(arg[1]))
        elif op is C.CATEGORY:
            if negated or arg not in _CLASSES:
                return _ANY
            parts.append(_CLASSES[arg])
    return ("[^" if negated else "[") + "".join(parts) + "]"


def _emit(items: Iterable[tuple[Any, Any]]) -> str:
    out = []
    for op, arg in items:
        if op is C.LITERAL:
            out.append(_lit(arg))
        elif op is C.NOT_LITERAL:
            out.append("[^" + _lit(arg) + "]")
        elif op is C.ANY:
            out.append(".")
        elif op is C.IN:
            out.append(_class(arg))
        elif op is C.BRANCH:
            out.append("(?:" + "|".join(_emit(b) for b in arg[1]) + ")")
        elif op is C.SUBPATTERN:
            out.append("(?" + _letters(arg[1], arg[2]) + ":" + _emit(arg[3]) + ")")
        elif op is C.ATOMIC_GROUP:
            out.append("(?:" + _emit(arg) + ")")
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            lo, hi = min(arg[0], MAX_COUNT), arg[1]
            q = ("*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}") if hi is C.MAXREPEAT or hi > MAX_COUNT else \
                "?" if (lo, hi) == (0, 1) else f"{{{lo}}}" if lo == hi else f"{{{lo},{hi}}}"
            out.append("(?:" + _emit(arg[2]) + ")" + q)
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        elif op is C.GROUPREF:
            out.append(_ANY + "*")
        else:
            raise ValueError(f"untranslated opcode {op}")
    return "".join(out)


def per_kb_ms(fn: Callable[[str], int], texts: list[str]) -> tuple[float, float]:
    """CPU ms per KB of one pass over ``texts`` and the mean of what ``fn`` returns (patterns left)."""
    start, left = time.thread_time(), 0
    for t in texts:
        left += fn(t)
    kb = sum(len(t.encode()) for t in texts) / 1024
    return (time.thread_time() - start) * 1000 / kb, left / len(texts)


def re2_set(exprs: list[str]) -> Callable[[str], int] | None:
    try:
        import re2
    except ImportError:
        return None
    options = re2.Options()
    options.max_mem, options.never_capture, options.log_errors = 64 << 20, True, False
    compiled = re2.Set.SearchSet(options)
    for e in exprs:
        compiled.Add(e)
    compiled.Compile()
    return lambda text: len(compiled.Match(text.lower()) or ())


def hyperscan_db(exprs: list[str]) -> Callable[[str], int] | None:
    try:
        import hyperscan as hs
    except ImportError:
        return None
    flags = hs.HS_FLAG_UTF8 | hs.HS_FLAG_SINGLEMATCH | hs.HS_FLAG_ALLOWEMPTY
    held = []
    for i, e in enumerate(exprs):
        try:
            hs.Database().compile(expressions=[e.encode()], ids=[i], elements=1, flags=[flags])
            held.append(i)
        except hs.error:
            continue  # "Pattern is too large": stays with re
    db = hs.Database()
    db.compile(expressions=[exprs[i].encode() for i in held], ids=held, elements=len(held), flags=[flags] * len(held))
    scratch, hits = hs.Scratch(db), []

    def scan(text: str) -> int:
        hits.clear()
        db.scan(text.lower().encode(), match_event_handler=lambda i, *_: hits.append(i), scratch=scratch)
        return len(hits) + len(exprs) - len(held)
    return scan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--entries", type=int, default=300)
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "bench"))
    import bench_scan

    from memrepo.detect import default_scanner

    scanner = default_scanner()
    rs = scanner.ruleset
    patterns = [p for r in rs.rules if not r.case_sensitive for _, p, _ in r.branches] + \
               [p for f in rs.features for _, p, _ in f.branches]
    exprs = [superset(p.source, p.flags) for p in patterns]
    texts = bench_scan.fresh_entries(args.entries)
    print(f"{len(patterns)} patterns (rules and scoring features), {len(texts)} fresh 1 KB entries from heldout225-248")
    print(f"{'engine':34s} {'build s':>8s} {'fresh ms/KB':>12s} {'again ms/KB':>12s} {'patterns left/entry':>20s}")
    def scan(text: str) -> int:  # the whole scan: what the engines would shorten
        scanner.scan_text(text)
        return 0

    fresh, _ = per_kb_ms(scan, texts)
    again, _ = per_kb_ms(scan, texts)
    print(f"{'memrepo scan (needles + re), whole':34s} {'-':>8s} {fresh:12.3f} {again:12.3f} {'~80 gated, all run':>20s}")
    for name, build in (("RE2 set (google-re2)", re2_set), ("Hyperscan", hyperscan_db)):
        t0 = time.perf_counter()
        fn = build(exprs)
        built = time.perf_counter() - t0
        if fn is None:
            print(f"{name:34s} not installed")
            continue
        fresh, left = per_kb_ms(fn, texts)
        again, _ = per_kb_ms(fn, texts)
        print(f"{name + ', one pass':34s} {built:8.1f} {fresh:12.3f} {again:12.3f} {left:20.1f}")


if __name__ == "__main__":
    main()
