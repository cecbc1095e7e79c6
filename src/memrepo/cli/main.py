"""The `memrepo` command: parse, then build, then execute (one module per command)."""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

# name -> module under memrepo.cli; each module has add_parser(subparsers) and run(args) -> int.
# Modules import only argparse at top level; verbs are imported inside run() to keep start-up light.
COMMANDS: dict[str, str] = {
    "init": "init",
    "remember": "write",
    "replace": "write",
    "forget": "write",
    "batch": "write",
    "review": "review",
    "promote": "promote",
    "reject": "promote",
    "render": "render",
    "log": "log",
    "show": "log",
    "check": "check",
    "scan": "scan",
    "audit": "audit",
    "doctor": "doctor",
    "curate": "curate",
    "cost": "cost",
    "scope": "scope",
    "report": "report_cmd",
    "gitops": "gitops",
    "sync": "sync",
    "propose": "sync",
    "skill": "skill",
    "recall": "recall",
    "mcp": "mcp",
    "import": "interop",
    "export": "interop",
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The full parser, or (for start-up speed) just the module that defines command ``only``."""
    parser = argparse.ArgumentParser(prog="memrepo", description="A git-native memory repository for AI agents.")
    parser.add_argument("-C", dest="repo", metavar="PATH", default=None,
                        help="run as if memrepo was started in PATH (like git -C)")
    parser.add_argument("--version", action=_VersionAction, nargs=0, help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    seen: set[str] = set()
    modules = [COMMANDS[only]] if only in COMMANDS else list(COMMANDS.values())
    for module in modules:
        if module in seen:
            continue
        seen.add(module)
        importlib.import_module(f"memrepo.cli.{module}").add_parser(sub)
    return parser


class _VersionAction(argparse.Action):
    """--version without reading package metadata on every start (that costs ~100 ms)."""

    def __call__(self, parser: argparse.ArgumentParser, *args: object, **kwargs: object) -> None:
        print(f"memrepo {_version()}")
        parser.exit()


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("memrepo")
    except Exception:  # noqa: BLE001 - metadata missing in a bare checkout
        return "0+unknown"


def _command_of(argv: list[str]) -> str | None:
    """The subcommand named in argv (after global options), if any."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-C":
            i += 2
            continue
        if arg.startswith("-C") and len(arg) > 2:
            i += 1
            continue
        return None if arg.startswith("-") else arg
    return None


def main(argv: Sequence[str] | None = None) -> int:
    from ..errors import MemrepoError
    from .output import report_error

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # usage errors (2) and --help/--version (0)
        return int(exc.code or 0)
    if args.repo is None:
        args.repo = os.getcwd()
    fmt = getattr(args, "format", "text")
    try:
        return int(args.func(args))
    except MemrepoError as exc:
        report_error(exc, fmt)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 1
    except Exception as exc:  # noqa: BLE001 - a bug: say so, keep the traceback in a log, not on screen
        return _report_bug(exc)


def _report_bug(exc: Exception) -> int:
    import tempfile
    import traceback

    log = os.path.join(tempfile.gettempdir(), "memrepo-crash.log")
    with open(log, "a", encoding="utf-8") as fh:
        fh.write("".join(traceback.format_exception(exc)))
    print(f"memrepo: internal error ({type(exc).__name__}: {exc}); this is a bug. Details: {log}", file=sys.stderr)
    return 3


def entry() -> None:
    """The console script and ``python -m memrepo``: run, flush, and leave without the
    interpreter's teardown (freeing every module and object costs ~20 ms per command, 15% of a
    CLI write). Every write is on disk before ``main`` returns: objects and refs are written
    synchronously, files are closed, locks are released; only flushing the output is left."""
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (BrokenPipeError, ValueError):  # a reader that went away, or a stream closed by the command
        code = code or 1
    if os.environ.get("MEMREPO_SLOW_EXIT"):  # e.g. for coverage or leak checkers that need atexit
        raise SystemExit(code)
    rxcache = sys.modules.get("memrepo.detect.rxcache")
    if rxcache is not None:  # the regex code this command compiled, for the next one (no atexit here)
        rxcache.flush()
    os._exit(code)
