"""The one place an error becomes an exit status: every command runs guarded, and the user never
sees a traceback."""

from __future__ import annotations

import os
import sys

from megalint.errors import ExitCode, RuleFileError, UsageError, internal_error_line

TYPE_CHECKING = False  # not from `typing`: the command line starts with this module
if TYPE_CHECKING:
    from collections.abc import Callable


def note(message: str) -> None:
    """A message about the run, on standard error."""
    print(f"megalint: {message}", file=sys.stderr)


def run_guarded(command: Callable[[list[str]], int], argv: list[str]) -> int:
    """Run a command: usage, configuration and rule-file errors become one line and exit 2; any
    other exception one line and exit 3."""
    try:
        return command(argv)
    except UsageError as exc:  # ConfigError included
        note(str(exc))
        return ExitCode.USAGE
    except RuleFileError as exc:  # one file:line:col line per problem
        print(str(exc), file=sys.stderr)
        return ExitCode.USAGE
    except SystemExit as exc:  # argparse: --help is 0, a bad option 2
        return int(exc.code) if isinstance(exc.code, int) else ExitCode.USAGE
    except KeyboardInterrupt:
        return ExitCode.INTERRUPTED
    except BrokenPipeError:  # `megalint … | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return ExitCode.CLEAN
    except Exception as exc:  # noqa: BLE001 - the one place a user must never see a traceback
        note(internal_error_line(exc))
        return ExitCode.INTERNAL
