"""`megalint [PATHS]`: the main command. Its options, the report in each output format and the exit
status; the files are checked by megalint/checking/ (configuration, selection, suppression, fixes).
"""

from __future__ import annotations

import argparse
import gc
import os
import sys

from megalint import __version__, classcode, replay
from megalint.cli.analysis import add_analysis_options, analysis_setups, check_analysis_options
from megalint.cli.guard import note
from megalint.cli.version import version_text
from megalint.errors import ExitCode, UsageError
from megalint.levels import THRESHOLDS

# `--help` builds the parser and nothing else: typing, the configuration, discovery and the
# output formats (and the dataclasses they make) are imported by the functions that run a check.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import TextIO

    from megalint.checking.run import RunOptions, RunResult
    from megalint.checking.setup import Setups
    from megalint.output import OutputTarget

DEFAULT_WIDTH = 100
GC_THRESHOLD = 100_000  # allocations between two collections of the youngest objects

EXIT_STATUS_HELP = """\
exit status:
  0  no finding at or above the failure threshold (or every one was fixed);
     with --diff: no fix to show
  1  findings at or above the failure threshold (default: warning, so info
     never fails unless --failure-threshold info); with --diff: a fix to show
  2  usage, configuration, rule-file or input error: an unknown option or rule
     code, a bad configuration (reported as file:line:col), a rule whose
     condition fails on a script, a path that does not exist, a file that
     cannot be read, is not a regular file, is binary, is over 64 MiB or is
     not UTF-8, or whose fixes cannot be written (read-only, changed
     meanwhile, a link out of the folder checked); the other files are still
     checked
  3  internal error: a bug in megalint, reported in one line; please report it
  4  no files found: no script under the paths given (ruff's "No files found")

[*] marks a finding that --fix fixes (with --unsafe-fixes: unsafe fixes too).

other commands:
  megalint rule NAME|CODE   what a rule checks, why, an example, what instead
  megalint rules [--json]   every rule
  megalint explain SCRIPT   per launch: the rules that fired, passed, or could
                            not decide and why
  megalint model SCRIPT     what megalint understood of a script
  megalint memory SCRIPT    the memory estimate of each launch
  megalint catalogue --from PATH
                            extract a flag catalogue from a Megatron-LM checkout
"""


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """argparse's, given the width it would take (the terminal's, less 2) worked out without
    `shutil`: argparse imports it for that whenever an option is added, and with it the
    compression modules (2 ms of a first check)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24, width: int | None = None):
        super().__init__(prog, indent_increment, max_help_position, terminal_columns() - 2 if width is None else width)


def terminal_columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else standard output's terminal's, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="megalint",
        description="Lint Megatron-LM launch scripts before they wait in a queue.",
        epilog=EXIT_STATUS_HELP,
        formatter_class=_Formatter,
    )
    p.add_argument("paths", nargs="*", help="scripts or folders (searched recursively); `-` reads standard input")
    p.add_argument("--version", action="version", version=version_text())
    out = p.add_argument_group("output")
    out.add_argument(
        "--output-format",
        action="append",
        default=[],
        metavar="FORMAT[:PATH]",
        help="full (default), concise, grouped, json, json-lines, sarif, github, gitlab, junit; "
        "repeatable; FORMAT:PATH writes to a file",
    )
    out.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="colour the human formats (auto: on a terminal, unless NO_COLOR; FORCE_COLOR forces it)",
    )
    out.add_argument(
        "--statistics",
        action="store_true",
        help="print how many findings of each rule instead of the findings (a JSON list with --output-format json)",
    )
    out.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings (errors still exit 2 or 3)")
    out.add_argument(
        "--failure-threshold",
        choices=THRESHOLDS,
        help="lowest severity that makes the exit status 1 (default: warning; none: never)",
    )
    add_analysis_options(p)
    files = p.add_argument_group("files")
    files.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="gitignore-style pattern of files and folders to skip (repeatable)",
    )
    files.add_argument(
        "--force-exclude",
        action="store_true",
        help="apply the excludes, and the choice of shell scripts, to files named on the command line too "
        "(for pre-commit)",
    )
    files.add_argument("--stdin-filename", metavar="PATH", help="the name standard input is reported under")
    speed = p.add_argument_group("speed")
    speed.add_argument(
        "--jobs",
        type=_jobs,
        metavar="N",
        help="check the files in N processes (default: the configuration's `jobs`, else every core; 1: one process)",
    )
    speed.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the cache of results (.megalint_cache/ at the root)",
    )
    fix = p.add_argument_group("fixes")
    fix.add_argument("--fix", action="store_true", help="apply safe fixes in place (standard input: print the result)")
    fix.add_argument("--unsafe-fixes", action="store_true", help="apply unsafe fixes too")
    fix.add_argument("--diff", action="store_true", help="print the fixes as a unified diff and write nothing")
    return p


def _jobs(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of processes, at least 1, not `{text}`")
    return int(text)


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    classcode.install()  # once the options are read: `--help` needs no class
    from megalint.output import parse_output_formats

    targets = parse_output_formats(args.output_format)
    recording = replay.Recording() if replay.enabled() and _replayable(args, targets) else None
    done = _Done()
    try:
        status = _check(args, targets, done)
    finally:
        if recording is not None:
            recording.stop()
    if recording is not None and done.rests_on is not None and status in (ExitCode.CLEAN, ExitCode.FINDINGS):
        from megalint.config import CANDIDATE_NAMES

        replay.keep(argv, recording, status, *done.rests_on, CANDIDATE_NAMES)
    return status


class _Done:
    """What a run leaves for its replay (replay.py): the files and the folders its report rests on,
    or None when the run is not one to replay."""

    rests_on: tuple[set[str], set[str], dict[str, int]] | None = None


def _replayable(args: argparse.Namespace, targets: Sequence[OutputTarget]) -> bool:
    """Whether the command writes nothing but its reports, on files named one by one, with no
    folder of rules or Megatron checkout whose files would be named by folder (replay.py)."""
    from megalint.discovery import STDIN

    if args.fix or args.diff or args.unsafe_fixes or args.no_cache or args.stdin_filename is not None:
        return False
    if not args.paths or STDIN in args.paths or not all(os.path.isfile(p) for p in args.paths):
        return False
    if args.rule_dir or args.megatron_root or os.environ.get("GITHUB_STEP_SUMMARY"):
        return False
    return all(t.path is None for t in targets)


def _rests_on(
    args: argparse.Namespace, run: RunResult, setups: Setups, options: RunOptions
) -> tuple[set[str], set[str], dict[str, int]] | None:
    """The files a replay of this run rests on, the folders whose configuration could apply and
    what the checks asked the file system (probes.py);
    None when a file could not be read, a rule failed, or the cache is not at the working folder."""
    from megalint.checking.run import cache_root

    if run.input_errors or run.internal_errors or run.rule_errors or run.passed_through:
        return None
    if cache_root(options, setups) != os.getcwd():
        return None
    if any(cfg.rule_dirs or cfg.megatron_roots for cfg in setups.used()):
        return None
    files = {*args.paths, *run.sources, *run.code, *([args.config] if args.config else [])}
    return files, {os.path.dirname(os.path.abspath(p)) for p in args.paths}, run.probes


def _check(args: argparse.Namespace, targets: Sequence[OutputTarget], done: _Done) -> int:
    # Imported once the options are read: `--help` and a usage error need none of the pipeline.
    # Importing it makes thousands of long-lived objects and no garbage: collecting meanwhile only
    # costs time, and frozen they are left out of the collections of the run.
    gc.disable()
    try:
        from megalint.checking.outcome import FixMode
        from megalint.checking.run import RunOptions, check_files
    finally:
        gc.freeze()
        gc.enable()
    # Most of what a check makes is freed by reference counting or lives to the end of the run
    # (rules, catalogues, the memo of expansions): collecting every 700 allocations, Python's
    # default, only walks the survivors again and again (a tenth of a run over many scripts).
    # Over the 860 public scripts, collecting took 3.6 s every 20,000 allocations, 3.1 s every
    # 50,000 and 1.5 s every 100,000 (most of one script's work is freed before a collection),
    # for 7 MiB more at the peak; 200,000 saved little more for 16 MiB.
    gc.set_threshold(GC_THRESHOLD, 10, 10)

    from megalint.discovery import STDIN

    check_analysis_options(args)
    paths = args.paths or ([STDIN] if args.stdin_filename is not None else [])
    setups = analysis_setups(args, exclude=args.exclude, failure_threshold=args.failure_threshold)
    fixes = FixMode(fix=args.fix, diff=args.diff, unsafe=args.unsafe_fixes)
    options = RunOptions(paths, args.force_exclude, args.stdin_filename, fixes, args.jobs, not args.no_cache)
    report_stream = sys.stderr if options.fixes_standard_input else sys.stdout
    run = check_files(setups, options, stdin=sys.stdin, note=note, write=_write_out)
    done.rests_on = _rests_on(args, run, setups, options)
    # Nothing checked is not "All checks passed": the human report is left out, and a run that
    # found no script at all says so with its own status.
    nothing = run.checked == 0
    if nothing and not run.input_errors and not run.internal_errors and not run.passed_through:
        _emit(targets, run, args.color, args.unsafe_fixes, report_stream, nothing, args.statistics)
        if any(os.path.isfile(p) for p in paths):
            # Files named one by one (a pre-commit call) that are excluded or not scripts: done.
            note("no file given is a script to check (excluded by the configuration, or not a shell script)")
            return ExitCode.CLEAN
        note(f"no files found to check in {', '.join(paths) or '.'}")
        return ExitCode.NO_FILES
    if args.diff:
        if run.fixed:
            note(f"would fix {run.fixed} finding(s)")
    else:
        # A rule that failed on a file decided nothing there: no "All checks passed." either.
        quiet = nothing or bool(run.rule_errors and not run.diagnostics)
        _emit(targets, run, args.color, args.unsafe_fixes, report_stream, quiet, args.statistics)
        if run.fixed:
            note(f"fixed {run.fixed} finding(s)")
    if run.internal_errors:
        return ExitCode.INTERNAL
    if run.input_errors or run.rule_errors:
        return ExitCode.USAGE
    if args.exit_zero:
        return ExitCode.CLEAN
    if args.diff:
        return ExitCode.FINDINGS if run.any_diff else ExitCode.CLEAN
    return ExitCode.FINDINGS if run.failing else ExitCode.CLEAN


def _width(is_tty: bool) -> int:
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) >= 20:
        return int(cols)
    if is_tty:
        import shutil

        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def _emit(
    targets: Sequence[OutputTarget],
    run: RunResult,
    color_mode: str,
    unsafe_fixes: bool,
    stream: TextIO,
    nothing: bool = False,
    statistics: bool = False,
) -> None:
    """Write each report; when no file was checked, a human report is empty (a file of it is still
    written, for a CI step that expects it), since nothing "passed"."""
    from megalint.output import HUMAN_FORMATS, render
    from megalint.output.common import RenderOptions, color_enabled

    step_summary = None
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        from megalint.output.github import summary_writer

        step_summary = summary_writer(os.environ["GITHUB_STEP_SUMMARY"])
    from megalint.output.paths import repository_root

    cwd = os.getcwd()
    root = repository_root(os.environ, cwd)
    for target in targets:
        to_file = target.path
        is_tty = to_file is None and _isatty(stream)
        color = to_file is None and target.format in HUMAN_FORMATS and color_enabled(color_mode, is_tty)
        opts = RenderOptions(
            color=color,
            width=_width(is_tty),
            root=root,
            base=cwd,
            unsafe_fixes=unsafe_fixes,
            step_summary=step_summary,
            tool_version=__version__,
        )
        if nothing and target.format in HUMAN_FORMATS:
            text = ""
        elif statistics:
            from megalint.cli.statistics import render_statistics

            text = render_statistics(run.diagnostics, target.format, unsafe_fixes)
        else:
            text = render(target.format, run.diagnostics, run.sources, run.known, opts)
        if text and not text.endswith("\n"):
            text += "\n"
        if to_file is not None:
            try:
                os.makedirs(os.path.dirname(os.path.abspath(to_file)), exist_ok=True)
                with open(to_file, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                raise UsageError(
                    f"--output-format {target.format}:{to_file}: cannot write: {exc.strerror or exc}"
                ) from None
        else:
            stream.write(text)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _write_out(text: str) -> None:
    # Looked up at each call: tests and the stdin mode swap sys.stdout after import.
    sys.stdout.write(text)
