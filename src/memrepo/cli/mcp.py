"""memrepo mcp: serve the repository to an agent over MCP (stdio)."""
from __future__ import annotations

import argparse
from typing import Any


def add_parser(sub: Any) -> None:
    p = sub.add_parser("mcp", help="run an MCP server over stdio (memory, memory_recall, skills_list, skill_view, "
                                   "skill_manage)")
    p.add_argument("--agent", default=None, help="agent name recorded on every write (default $MEMREPO_AGENT)")
    p.add_argument("--scope", default=None, metavar="NAME",
                   help="serve as subagent NAME: only the scopes and skills its manifest declares, writes to its "
                        "own branch (see `memrepo scope`)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..mcp_server import serve

    serve(args.repo, agent=args.agent, scope=args.scope)
    return 0
