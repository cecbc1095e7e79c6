"""memrepo recall: hybrid search over every scope (BM25 + tags + entities), JSON for agents."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("recall", help="search memories in every scope (recall-only ones too)")
    p.add_argument("query", help="what to look for (any language; Chinese and other CJK text included)")
    p.add_argument("-k", type=int, default=5, help="how many results (default 5, at most 100)")
    p.add_argument("--branch", default=None,
                   help="provisional (default: includes pending writes, marked pending) or verified")
    p.add_argument("--scope", action="append", default=None, metavar="SCOPE",
                   help="only this scope (repeatable; default: all scopes)")
    add_format(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..verbs.recall import recall

    result = recall(args.repo, args.query, k=args.k, branch=args.branch, scopes=args.scope)

    def text(r: dict[str, Any]) -> str:
        if not r["results"]:
            return f"no match on {r['branch']}"
        lines = []
        for hit in r["results"]:
            mark = " (pending)" if hit["pending"] else ""
            lines.append(f"{hit['score']:.4f}  {hit['id']} [{hit['scope']}]{mark}  {hit['text']}")
        return "\n".join(lines)

    emit(args.format, result.to_json(), text)
    return 0
