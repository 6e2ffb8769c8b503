"""`megalint [PATHS]`: configuration, selection, suppression, fixes, output and exit status per run.

Discovery is in megalint/discovery.py, rule selection in megalint/selection.py; the
pipeline for one script in megalint/pipeline.py.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from dataclasses import dataclass, replace
from typing import TextIO

from megalint import __version__
from megalint.cli.analysis import add_analysis_options, check_analysis_options, parse_assume
from megalint.cli.guard import note
from megalint.config import THRESHOLDS, Config, config_in, load_config
from megalint.diagnostics import Diagnostic, Severity
from megalint.discovery import STDIN, Excludes, Job, discover
from megalint.engine import Rule, RuleFileError, RuleInfo, RuleSet, load_rules
from megalint.errors import ExitCode, InputError, UsageError, internal_error_line
from megalint.output import HUMAN_FORMATS, parse_output_formats, render
from megalint.output.common import RenderOptions, color_enabled
from megalint.pipeline import FileResult, Settings, lint_text
from megalint.selection import Catalog, Layer, check_selectors, matches, selected_codes, severity_for
from megalint.shell.parse import decode
from megalint.source import SourceFile, Span
from megalint.suppress import apply_suppressions, parse_directives, suppression_rules

DEFAULT_THRESHOLD = "warning"
DEFAULT_WIDTH = 100
BOM = "\ufeff"

EXIT_STATUS_HELP = """\
exit status:
  0  no finding at or above the failure threshold (or every one was fixed);
     with --diff: no fix to show
  1  findings at or above the failure threshold (default: warning, so info never
     fails unless --failure-threshold info); with --diff: some fix to show
  2  usage, configuration, rule-file or input error: an unknown option or rule code, a
     bad configuration (reported as file:line:col), a path that does not exist, a file
     that cannot be read, is binary or is not UTF-8 (the other files are still checked)
  3  internal error: a bug in megalint, reported in one line; please report it

other commands:
  megalint rule NAME|CODE     what a rule checks, why, an example, what to write instead
  megalint rules [--json]     every rule
  megalint explain SCRIPT     per launch: which rules fired, passed, or could not decide and why
  megalint model SCRIPT       what megalint understood of a script
  megalint memory SCRIPT      the memory estimate of each launch
  megalint catalogue --from PATH   extract a flag catalogue from a Megatron-LM checkout
"""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="megalint",
        description="Lint Megatron-LM launch scripts before they wait in a queue.",
        epilog=EXIT_STATUS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        help="apply the excludes to paths named on the command line too (for pre-commit)",
    )
    files.add_argument("--stdin-filename", metavar="PATH", help="the name standard input is reported under")
    fix = p.add_argument_group("fixes")
    fix.add_argument("--fix", action="store_true", help="apply safe fixes in place (standard input: print the result)")
    fix.add_argument("--unsafe-fixes", action="store_true", help="apply unsafe fixes too")
    fix.add_argument("--diff", action="store_true", help="print the fixes as a unified diff and write nothing")
    return p


def version_text() -> str:
    from megalint.megatron.versions import KNOWN_VERSIONS

    return f"megalint {__version__} (Megatron-LM versions: {', '.join(KNOWN_VERSIONS)})"


# -- per-file setup ------------------------------------------------------------------------


class Configs:
    """The configuration of each file: --config's, none with --isolated, else the nearest one."""

    def __init__(self, explicit: str | None, isolated: bool):
        self.fixed = load_config(explicit) if explicit else (Config(root=os.getcwd()) if isolated else None)
        self._by_dir: dict[str, Config] = {}

    def for_path(self, path: str, is_dir: bool = False) -> Config:
        if self.fixed is not None:
            return self.fixed
        folder = os.path.abspath(path if is_dir else os.path.dirname(os.path.abspath(path)))
        return self._for_dir(folder)

    def _for_dir(self, folder: str) -> Config:
        if folder not in self._by_dir:
            found = config_in(folder)
            parent = os.path.dirname(folder)
            if found:
                cfg = load_config(found)
                if cfg.path is None:  # a pyproject.toml whose megalint table is elsewhere
                    cfg = self._for_dir(parent) if parent != folder else Config(root=os.getcwd())
            else:
                cfg = self._for_dir(parent) if parent != folder else Config(root=os.getcwd())
            self._by_dir[folder] = cfg
        return self._by_dir[folder]


@dataclass
class Setup:
    """What one configuration means for the files under it."""

    config: Config
    rules: RuleSet  # every rule loaded for it
    selected: RuleSet
    codes_on: set[str]  # selected rule codes
    known: dict[str, Rule]  # every rule by code
    settings: Settings
    threshold: str
    pfi: list[tuple[Excludes, list[str]]]


class Runner:
    """State shared by the files of one run."""

    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.configs = Configs(args.config, args.isolated)
        self.cli_assume = parse_assume(args.assume)
        self.cli_excludes = Excludes(getattr(args, "exclude", []), os.getcwd())
        self._excludes: dict[int, Excludes] = {}
        self._rules: dict[tuple[str, ...], RuleSet] = {}
        self._setups: dict[int, Setup] = {}

    def rules_for(self, dirs: list[str]) -> RuleSet:
        key = tuple(dirs) + tuple(self.args.rule_dir)
        if key not in self._rules:
            self._rules[key] = load_rules(list(key))
        return self._rules[key]

    def setup(self, cfg: Config) -> Setup:
        key = id(cfg)
        if key not in self._setups:
            self._setups[key] = self._make_setup(cfg)
        return self._setups[key]

    def _make_setup(self, cfg: Config) -> Setup:
        args = self.args
        rules = self.rules_for(cfg.rule_dirs)
        known = rules.by_code()
        catalog = Catalog(known)
        for key in ("select", "extend-select", "ignore"):
            for s in getattr(cfg, key.replace("-", "_")) or ():
                if not catalog.known(s):
                    raise cfg.error_at((key,), catalog.unknown_message(s, f"`{key}`"), s)
        for s in cfg.severity:
            if not catalog.known(s):
                raise cfg.error_at(("severity", s), catalog.unknown_message(s, "`severity`"))
        for pattern, codes in cfg.per_file_ignores.items():
            for s in codes:
                if not catalog.known(s):
                    raise cfg.error_at(
                        ("per-file-ignores", pattern), catalog.unknown_message(s, "`per-file-ignores`"), s
                    )
        for option in ("select", "extend_select", "ignore"):
            check_selectors(catalog, getattr(args, option) or (), f"--{option.replace('_', '-')}")
        codes = {c: r.name for c, r in known.items()}
        preview = {r.code for r in rules if r.status == "preview"}
        layers = [Layer(cfg.select, cfg.extend_select, cfg.ignore), Layer(args.select, args.extend_select, args.ignore)]
        on = selected_codes(codes, layers, preview)
        selected = RuleSet([r for r in rules if r.code in on])
        settings = Settings(
            rules=selected,
            megatron_version=args.megatron_version or cfg.megatron_version,
            gpu=args.gpu or cfg.gpu,
            assume={**cfg.assume, **self.cli_assume},
            root_dir=cfg.root if cfg.path else os.getcwd(),
            follow_source_outside_root=cfg.follow_source_outside_root,
            with_memory=not args.no_memory,
        )
        threshold = getattr(args, "failure_threshold", None) or cfg.failure_threshold or DEFAULT_THRESHOLD
        pfi = [(Excludes([pattern], cfg.root), codes_) for pattern, codes_ in cfg.per_file_ignores.items()]
        return Setup(cfg, rules, selected, on, known, settings, threshold, pfi)

    def excluded(self, path: str, is_dir: bool) -> bool:
        if self.cli_excludes.match(path, is_dir):
            return True
        cfg = self.configs.for_path(path, is_dir)
        if not cfg.exclude:
            return False
        if id(cfg) not in self._excludes:
            self._excludes[id(cfg)] = Excludes(cfg.exclude, cfg.root)
        return self._excludes[id(cfg)].match(path, is_dir)


# -- one file ------------------------------------------------------------------------------


def finalise(result: FileResult, text: str, setup: Setup, shown: str) -> list[Diagnostic]:
    """The pipeline's findings after per-file ignores, inline suppressions and severity overrides."""
    ignored = [c for spec, codes in setup.pfi if spec.match(shown) for c in codes]
    raw = [d for d in result.diagnostics if not _named(d, ignored)]
    enabled = [c for c in setup.codes_on if not any(_named_code(c, setup.known[c].name, t) for t in ignored)]
    undecided = {u.rule.code for u in result.evaluation.undecided}
    kept, own = apply_suppressions(
        raw, directives(result, text, shown), setup.known, enabled=enabled, undecided=undecided
    )
    own = [d for d in own if d.code in setup.codes_on and not _named(d, ignored)]
    out = []
    for d in kept + own:
        sev = severity_for(d.code, d.name, d.severity, setup.config.severity)
        out.append(replace(d, severity=sev) if sev != d.severity else d)
    return sorted(out, key=lambda d: d.sort_key())


def directives(result: FileResult, text: str, shown: str):
    # The pipeline's parse has the comments right where tree-sitter alone does not (after an
    # unfilled `<placeholder>`, which it rewrites before parsing).
    # A comment never owns the `\r` of a CRLF line end, which tree-sitter counts in it: a fix
    # that removes the comment must leave the line end alone.
    comments = []
    for _, span in result.facts.comments:
        if span.path != shown:
            continue
        if span.end > span.start and text[span.end - 1 : span.end] == "\r":
            span = Span(
                span.path, span.start_line, span.start_col, span.end_line, span.end_col - 1, span.start, span.end - 1
            )
        comments.append(span)
    return parse_directives(text, shown, comments=comments)


def _named(d: Diagnostic, selectors: list[str]) -> bool:
    return any(_named_code(d.code, d.name, s) for s in selectors)


def _named_code(code: str, name: str, selector: str) -> bool:
    return matches(selector, code, name)


@dataclass
class Outcome:
    diagnostics: list[Diagnostic]
    sources: dict[str, SourceFile]
    fixed: int = 0
    diff: str = ""


def lint_one(text: str, shown: str, setup: Setup, args: argparse.Namespace, write_back) -> Outcome:
    result = lint_text(shown, text, setup.settings)
    diags = finalise(result, text, setup, shown)
    if not (args.fix or args.diff):
        return Outcome(diags, dict(result.sources))
    from megalint.fix import apply_fixes, bash_parses, unified_diff

    last = [result]

    def relint(new_text: str) -> list[Diagnostic]:
        last[0] = lint_text(shown, new_text, setup.settings)
        return finalise(last[0], new_text, setup, shown)

    res = apply_fixes(text, diags, unsafe=args.unsafe_fixes, reparse_ok=bash_parses, relint=relint, path=shown)
    if res.refused:
        note(f"{shown}: no fix applied: {res.refused}")
    if res.rejected:
        codes = ", ".join(sorted({d.code for d in res.rejected}))
        note(f"{shown}: {len(res.rejected)} fix(es) not applied ({codes}): the script would no longer parse")
    if not res.converged:
        note(f"{shown}: fixes did not converge; the file may still have fixable findings")
    outcome = Outcome(list(res.remaining), dict(last[0].sources), res.fixed_count)
    if args.diff:
        outcome.diff = unified_diff(text, res.text, shown)
    else:
        write_back(res.text, res.changed)
    return outcome


# -- the run -------------------------------------------------------------------------------


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    targets = parse_output_formats(args.output_format)
    check_analysis_options(args)
    if args.stdin_filename is not None and not args.paths:
        args.paths = [STDIN]
    runner = Runner(args)
    stdin_fix = args.fix and not args.diff and STDIN in (args.paths or [])
    report_stream = sys.stderr if stdin_fix else sys.stdout
    all_diags: list[Diagnostic] = []
    sources: dict[str, SourceFile] = {}
    # The suppression rules are described to the outputs even when no file could be linted.
    known: dict[str, RuleInfo] = dict(suppression_rules())
    errors = {"input": 0, "internal": 0}
    failing = False
    fixed = 0
    any_diff = False

    def missing(p: str) -> None:
        note(f"{p}: no such file or folder")
        errors["input"] += 1

    for job in discover(args.paths or ["."], runner.excluded, missing, args.force_exclude):
        shown, cfg_path = _names(job, args.stdin_filename)
        cfg = runner.configs.for_path(cfg_path)
        if job.real is None and args.force_exclude and args.stdin_filename and runner.excluded(cfg_path, False):
            if stdin_fix:
                sys.stdout.write(sys.stdin.read())
            continue
        setup = runner.setup(cfg)
        known.update(setup.known)
        try:
            data = sys.stdin.buffer.read() if job.real is None else _read(job.real)
            text = decode(shown, data)
        except InputError as exc:
            note(str(exc))
            errors["input"] += 1
            continue
        except OSError as exc:
            note(f"{shown}: cannot read: {exc.strerror or exc}")
            errors["input"] += 1
            continue
        bom = BOM if data.startswith(BOM.encode()) else ""
        try:
            outcome = lint_one(text, shown, setup, args, _writer(job, bom))
        except (UsageError, RuleFileError):
            raise
        except Exception as exc:  # noqa: BLE001 - one bad file must not hide the others' findings
            note(internal_error_line(exc, shown))
            errors["internal"] += 1
            continue
        if outcome.diff:
            any_diff = True
            sys.stdout.write(outcome.diff)
        fixed += outcome.fixed
        sources.update(outcome.sources)
        all_diags.extend(outcome.diagnostics)
        level = None if setup.threshold == "none" else Severity(setup.threshold).rank
        failing = failing or (level is not None and any(d.severity.rank >= level for d in outcome.diagnostics))
    if args.diff:
        if fixed:
            note(f"would fix {fixed} finding(s)")
    else:
        _emit(targets, all_diags, sources, known, args, report_stream)
        if fixed:
            note(f"fixed {fixed} finding(s)")
    if errors["internal"]:
        return ExitCode.INTERNAL
    if errors["input"]:
        return ExitCode.USAGE
    if args.exit_zero:
        return ExitCode.CLEAN
    if args.diff:
        return ExitCode.FINDINGS if any_diff else ExitCode.CLEAN
    return ExitCode.FINDINGS if failing else ExitCode.CLEAN


def _names(job: Job, stdin_filename: str | None) -> tuple[str, str]:
    """(the name findings carry, the path whose configuration applies)."""
    if job.real is not None:
        return job.path, job.real
    if stdin_filename:
        return os.path.normpath(stdin_filename), stdin_filename
    return STDIN, os.path.join(os.getcwd(), STDIN)


def _read(path: str) -> bytes:
    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder")
    with open(path, "rb") as fh:
        return fh.read()


def _writer(job: Job, bom: str):
    def write(text: str, changed: bool) -> None:
        if job.real is None:
            sys.stdout.write(text)
        elif changed:
            with open(job.real, "w", encoding="utf-8", newline="") as fh:
                fh.write(bom + text)

    return write


def _width(is_tty: bool) -> int:
    cols = os.environ.get("COLUMNS", "")
    if cols.isdigit() and int(cols) >= 20:
        return int(cols)
    if is_tty:
        return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns
    return DEFAULT_WIDTH


def _emit(targets, diags, sources, known, args, stream: TextIO) -> None:
    step_summary = None
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        from megalint.output.github import summary_writer

        step_summary = summary_writer(os.environ["GITHUB_STEP_SUMMARY"])
    root = os.environ.get("GITHUB_WORKSPACE") or os.getcwd()
    for target in targets:
        to_file = target.path is not None
        is_tty = (not to_file) and _isatty(stream)
        color = not to_file and target.format in HUMAN_FORMATS and color_enabled(args.color, is_tty)
        opts = RenderOptions(
            color=color,
            width=_width(is_tty),
            root=root,
            unsafe_fixes=args.unsafe_fixes,
            step_summary=step_summary,
            tool_version=__version__,
        )
        text = render(target.format, diags, sources, known, opts)
        if text and not text.endswith("\n"):
            text += "\n"
        if to_file:
            try:
                os.makedirs(os.path.dirname(os.path.abspath(target.path)), exist_ok=True)
                with open(target.path, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                raise UsageError(
                    f"--output-format {target.format}:{target.path}: cannot write: {exc.strerror or exc}"
                ) from None
        else:
            stream.write(text)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
