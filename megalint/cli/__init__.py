"""Command-line entry point: `megalint [PATHS]` and the subcommands, one module each.

Exit statuses (megalint.errors.ExitCode): 0 clean, 1 findings at or above the failure threshold,
2 usage/config/rule-file or input error, 3 internal error (one line, no traceback). Every command
runs through cli/guard.py, the one place errors become exit statuses.
"""

from __future__ import annotations

import os
import sys

from megalint import classcode, replay
from megalint.cli.guard import run_guarded
from megalint.errors import ExitCode, UsageError

TYPE_CHECKING = False  # not from `typing`: a replayed run (replay.py) imports as little as it can
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import NoReturn

# Each command's module is imported when it runs: `megalint rules` need not load the pipeline.


def _check(argv: list[str]) -> int:
    from megalint.cli.check import main as check_main

    return check_main(argv)


def _version(argv: list[str]) -> int:
    from megalint.cli.version import version_text

    print(version_text())
    return ExitCode.CLEAN


def _model(argv: list[str]) -> int:
    from megalint.cli.model import main as model_main

    return model_main(argv)


def _rules(argv: list[str]) -> int:
    from megalint.cli.rules import rules_main

    return rules_main(argv)


def _rule(argv: list[str]) -> int:
    from megalint.cli.rules import rule_main

    return rule_main(argv)


def _explain(argv: list[str]) -> int:
    from megalint.cli.explain import main as explain_main

    return explain_main(argv)


def _catalogue(argv: list[str]) -> int:
    from megalint.cli.catalogue import main as catalogue_main

    return catalogue_main(argv)


MEMORY_MODULE = "megalint.cli.memory"


def _memory(argv: list[str]) -> int:
    # A build without the memory report says so instead of failing on the import.
    import importlib.util

    if importlib.util.find_spec(MEMORY_MODULE) is None:
        raise UsageError("`megalint memory` is not available in this build")
    from megalint.cli.memory import main as memory_main

    return memory_main(argv)


VERSION_FLAGS = ("--version", "-V")
SUBCOMMANDS: dict[str, Callable[[list[str]], int]] = {
    "model": _model,
    "rules": _rules,
    "rule": _rule,
    "explain": _explain,
    "catalogue": _catalogue,
    "memory": _memory,
}


def main(argv: list[str] | None = None) -> int:
    """Run megalint on `argv` (default: the process's arguments); returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in VERSION_FLAGS:
        return run_guarded(_version, argv[1:])
    if argv and argv[0] in SUBCOMMANDS:
        return run_guarded(SUBCOMMANDS[argv[0]], argv[1:])
    return run_guarded(_check, argv)


def run() -> NoReturn:
    """The `megalint` command: `main()`, then the exit, without tearing the interpreter down.

    Freeing every module and object one by one takes about 13 ms, as long as checking a small
    script, and nothing needs it: megalint closes the files it writes, and its output is flushed
    here. A process pool or thread must be finished before `main()` returns (exit handlers do not
    run).
    """
    argv = sys.argv[1:]
    replay.enable()
    if not argv or argv[0] not in SUBCOMMANDS and argv[0] not in VERSION_FLAGS:
        try:
            replayed = replay.serve(argv)
        except Exception:  # noqa: BLE001 - a replay that cannot be made is a run made in full
            replayed = None
        if replayed is not None:
            _exit(replayed)
    classcode.enable()
    if argv and argv[0] in SUBCOMMANDS:
        classcode.install()  # the main command installs it once its options are read (check.py)
    status = main(argv)
    classcode.save()
    _exit(status)


def _exit(status: int) -> NoReturn:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`megalint … | head`) or stream
            pass
    os._exit(status)
