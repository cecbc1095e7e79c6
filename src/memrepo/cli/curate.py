"""memrepo curate: propose expirations, duplicate merges and skill drafts as one provisional commit."""
from __future__ import annotations

import argparse
from typing import Any

from .output import add_format, emit


def add_parser(sub: Any) -> None:
    p = sub.add_parser("curate", help="propose removals of expired entries, duplicate merges and skill drafts for review")
    p.add_argument("--dry-run", action="store_true", help="list the proposals without committing them")
    p.add_argument("--no-expire", dest="expire", action="store_false", help="do not propose expirations")
    p.add_argument("--no-merge", dest="merge", action="store_false", help="do not propose duplicate merges")
    p.add_argument("--no-skills", dest="skills", action="store_false", help="do not draft skills from shared tags")
    add_format(p)
    p.set_defaults(func=run)


def _text(r: dict[str, Any]) -> str:
    lines = [f"expire {e['id']} ({e['scope']}, ttl {e['ttl']}, last changed {e['last_change']})" for e in r["expired"]]
    lines += [f"merge {m['removed']} into {m['kept']} ({m['kind']} duplicate, {m['similarity']:.2f})" for m in r["merged"]]
    lines += [f"draft skill {s['name']} from {len(s['entries'])} verified entries tagged {s['tag']}" for s in r["skills"]]
    if not lines:
        return "nothing to curate"
    where = f"proposed on {r['branch']} at {r['commit']}; run `memrepo review`" if r["commit"] else "(dry run: nothing written)"
    return "\n".join(lines + [where])


def run(args: argparse.Namespace) -> int:
    from ..verbs.curate import curate

    result = curate(args.repo, expire=args.expire, merge=args.merge, skills=args.skills, dry_run=args.dry_run)
    emit(args.format, result.to_json(), _text)
    return 0
