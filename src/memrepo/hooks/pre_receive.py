"""git's pre-receive hook: reject pushes to protected branches that the target's policy blocks.

git runs it in the receiving repository with the pushed objects in quarantine and the ref
updates on stdin; anything printed to stderr reaches the pusher as ``remote:`` lines.
"""
from __future__ import annotations

import os
import sys


def main() -> int:
    from ..cli.report import text_line
    from ..errors import MemrepoError
    from ..verbs.gitops import check_push, open_with_quarantine, parse_updates

    try:
        store = open_with_quarantine(os.environ.get("GIT_DIR", "."))
        updates = check_push(store, parse_updates(sys.stdin.read()))
    except MemrepoError as exc:
        sys.stderr.write(f"memrepo: push refused: {exc.render()}\n")
        return 1
    except Exception as exc:  # noqa: BLE001 - fail closed: a crash must not let a push through
        sys.stderr.write(f"memrepo: push refused: internal error in the pre-receive hook ({type(exc).__name__}: {exc})\n")
        return 1
    refused = [u for u in updates if u.blocked]
    for up in updates:
        if not up.checked:
            continue
        shown = [f for f in up.findings if f.severity != "info" or f.rule == "policy.changed"]
        if up.blocked:
            sys.stderr.write(f"memrepo: REJECTED {up.ref}\n")
        elif shown:
            sys.stderr.write(f"memrepo: accepted {up.ref}\n")
        for f in shown:
            sys.stderr.write("  " + text_line(f).replace("\n", "\n  ") + "\n")
    if refused:
        sys.stderr.write(f"memrepo: push refused: {len(refused)} protected ref(s) failed the policy checks\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
