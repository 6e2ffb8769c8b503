"""`megalint [PATHS]`: discovery, configuration, selection, suppression, fixes, output, exit code."""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
from dataclasses import dataclass, replace

from megalint import __version__
from megalint.config import SEVERITIES, Config, ConfigError, find_config, load_config
from megalint.diagnostics import Diagnostic, Severity
from megalint.engine import RuleFileError, RuleSet, load_rules
from megalint.output import HUMAN_FORMATS, parse_output_formats, render
from megalint.output.common import RenderOptions, color_enabled
from megalint.output.meta import RuleMeta
from megalint.pipeline import Settings, lint_text, severity_of
from megalint.shell.parse import InputError, decode
from megalint.source import SourceFile
from megalint.suppress import SUPPRESSION_RULES, apply_suppressions, parse_directives

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
SHELL_EXTENSIONS = (".sh", ".bash", ".slurm", ".sbatch")
SKIP_DIRS = {".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__", ".tox", ".mypy_cache"}


class UsageError(Exception):
    pass


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="megalint", description="Lint Megatron-LM launch scripts before they wait in a queue.",
        epilog="Exit status: 0 clean, 1 findings at or above the failure threshold, 2 usage, configuration, "
               "rule-file or input error, 3 internal error. Other commands: megalint model SCRIPT, "
               "megalint memory SCRIPT, megalint explain SCRIPT, megalint rule NAME, megalint rules, "
               "megalint catalogue --from PATH.")
    p.add_argument("paths", nargs="*", help="scripts or folders (searched recursively); `-` reads standard input")
    p.add_argument("--version", action="version", version=version_text())
    p.add_argument("--output-format", action="append", default=[], metavar="FORMAT[:PATH]",
                   help="full (default), concise, grouped, json, json-lines, sarif, github, gitlab, junit; "
                        "repeatable; FORMAT:PATH writes to a file")
    p.add_argument("--megatron-version", help="Megatron version of the job (default: the config, else the newest)")
    p.add_argument("--gpu", help="GPU model when the script does not say (h100, a100-80gb, v100 …)")
    p.add_argument("--assume", action="append", default=[], metavar="NAME=VALUE",
                   help="a value for an environment input, e.g. --assume NNODES=4 (repeatable)")
    p.add_argument("--select", action="append", default=None, metavar="CODE", help="only these rules (code, name or prefix)")
    p.add_argument("--extend-select", action="append", default=[], metavar="CODE")
    p.add_argument("--ignore", action="append", default=[], metavar="CODE")
    p.add_argument("--rule-dir", action="append", default=[], metavar="DIR", help="an extra folder of YAML rules")
    p.add_argument("--config", help="a megalint.toml or pyproject.toml to use for every file")
    p.add_argument("--isolated", action="store_true", help="ignore every configuration file")
    p.add_argument("--exclude", action="append", default=[], metavar="GLOB")
    p.add_argument("--force-exclude", action="store_true", help="apply excludes to paths given explicitly too")
    p.add_argument("--stdin-filename", help="the name standard input is reported under")
    p.add_argument("--failure-threshold", choices=SEVERITIES, help="lowest severity that fails (default: warning)")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even with findings")
    p.add_argument("--fix", action="store_true", help="apply safe fixes")
    p.add_argument("--unsafe-fixes", action="store_true", help="with --fix, apply unsafe fixes too")
    p.add_argument("--diff", action="store_true", help="print the fixes as a diff instead of writing them")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto")
    p.add_argument("--no-memory", action="store_true", help="skip the memory estimate")
    return p


def version_text() -> str:
    from megalint.megatron.versions import KNOWN_VERSIONS

    return f"megalint {__version__} (Megatron-LM versions: {', '.join(KNOWN_VERSIONS)})"


def parse_assume(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items:
        if "=" not in item:
            raise UsageError(f"--assume takes NAME=VALUE, got `{item}`")
        k, v = item.split("=", 1)
        out[k.strip()] = v
    return out


def rule_metas(rules: RuleSet) -> dict[str, RuleMeta]:
    metas = dict(SUPPRESSION_RULES)
    for r in rules:
        d = r.docs
        metas[r.code] = RuleMeta(r.code, r.name, r.severity, d.what.strip().split("\n")[0] if d.what else r.name,
                                 help_uri=r.url, what=d.what or "", why=d.why or "", example=d.example or "",
                                 use_instead=d.use_instead or "", fix_safety=d.fix_safety or "",
                                 tags=(r.category,))
    return metas


def _matches(token: str, code: str, name: str) -> bool:
    t = token.strip()
    return t == code or t == name or (t.upper() == t and code.startswith(t))


def select_rules(rules: RuleSet, select, extend, ignore) -> RuleSet:
    known = [(r.code, r.name) for r in rules] + [(c, m.name) for c, m in SUPPRESSION_RULES.items()]
    for token in list(select or []) + list(extend) + list(ignore):
        if not any(_matches(token, c, n) for c, n in known):
            raise UsageError(f"unknown rule `{token}` in the selection (see `megalint rules`)")
    chosen = []
    for r in rules:
        on = True if not select else any(_matches(t, r.code, r.name) for t in select)
        on = on or any(_matches(t, r.code, r.name) for t in extend)
        if any(_matches(t, r.code, r.name) for t in ignore):
            on = False
        if on:
            chosen.append(r)
    return RuleSet(chosen)


@dataclass
class Job:
    path: str  # as shown
    real: str | None  # on disk, None for stdin
    text: str | None = None


def discover(paths: list[str], cfg_excludes: list[str], force_exclude: bool) -> list[Job]:
    jobs: list[Job] = []
    for p in paths:
        if p == "-":
            jobs.append(Job("-", None))
            continue
        if os.path.isdir(p):
            ignored = _gitignore(p)
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not _ignored(ignored, os.path.join(root, d), True))
                for f in sorted(files):
                    full = os.path.join(root, f)
                    if _ignored(ignored, full, False) or _excluded(full, cfg_excludes):
                        continue
                    if _is_script(full):
                        jobs.append(Job(os.path.normpath(full), full))
        elif os.path.exists(p) or os.path.islink(p):
            if force_exclude and _excluded(p, cfg_excludes):
                continue
            jobs.append(Job(os.path.normpath(p), p))
        else:
            raise UsageError(f"{p}: no such file or folder")
    return jobs


def _gitignore(folder: str):
    try:
        import pathspec
    except ImportError:  # pragma: no cover - a declared dependency
        return None
    specs = []
    d = os.path.abspath(folder)
    while True:
        gi = os.path.join(d, ".gitignore")
        if os.path.isfile(gi):
            try:
                with open(gi, encoding="utf-8", errors="replace") as fh:
                    specs.append((d, pathspec.PathSpec.from_lines("gitwildmatch", fh)))
            except OSError:
                pass
        if os.path.isdir(os.path.join(d, ".git")):
            break
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    for root, dirs, files in os.walk(folder):
        if root == folder:
            continue
        if ".gitignore" in files:
            try:
                with open(os.path.join(root, ".gitignore"), encoding="utf-8", errors="replace") as fh:
                    specs.append((os.path.abspath(root), pathspec.PathSpec.from_lines("gitwildmatch", fh)))
            except OSError:
                pass
    return specs


def _ignored(specs, path: str, is_dir: bool) -> bool:
    if not specs:
        return False
    ap = os.path.abspath(path)
    for base, spec in specs:
        if ap.startswith(base + os.sep):
            rel = os.path.relpath(ap, base).replace(os.sep, "/")
            if spec.match_file(rel + ("/" if is_dir else "")):
                return True
    return False


def _excluded(path: str, patterns: list[str]) -> bool:
    norm = os.path.normpath(path).replace(os.sep, "/")
    return any(fnmatch.fnmatch(norm, pat) or fnmatch.fnmatch(os.path.basename(norm), pat)
               or fnmatch.fnmatch(norm, "*/" + pat) for pat in patterns)


def _is_script(path: str) -> bool:
    if path.endswith(SHELL_EXTENSIONS):
        return True
    if "." in os.path.basename(path):
        return False
    try:
        with open(path, "rb") as fh:
            head = fh.readline(128)
    except OSError:
        return False
    return head.startswith(b"#!") and (b"bash" in head or head.rstrip().endswith(b"/sh") or b" sh" in head)


class RuleCache:
    def __init__(self, extra_cli: list[str]):
        self.extra = extra_cli
        self.cache: dict[tuple, RuleSet] = {}

    def get(self, dirs: list[str]) -> RuleSet:
        key = tuple(dirs) + tuple(self.extra)
        if key not in self.cache:
            self.cache[key] = load_rules(list(dirs) + list(self.extra))
        return self.cache[key]


def lint_main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        targets = parse_output_formats(args.output_format)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    cli_assume = parse_assume(args.assume)
    fixed_config: Config | None = load_config(args.config) if args.config else None
    paths = args.paths or ["."]
    jobs = discover(paths, (fixed_config.exclude if fixed_config else []) + args.exclude, args.force_exclude)
    rule_cache = RuleCache(args.rule_dir)
    all_diags: list[Diagnostic] = []
    sources: dict[str, SourceFile] = {}
    metas: dict[str, RuleMeta] = dict(SUPPRESSION_RULES)
    input_errors = 0
    threshold = args.failure_threshold
    fixes_applied = 0
    for job in jobs:
        cfg = fixed_config
        if cfg is None and not args.isolated:
            found = find_config(job.real or os.getcwd())
            cfg = load_config(found) if found else None
        cfg = cfg or Config()
        if job.real is not None and not args.force_exclude and cfg.exclude and job.real in paths:
            pass
        elif job.real is not None and cfg.exclude and _excluded(os.path.relpath(os.path.abspath(job.real), cfg.root), cfg.exclude):
            continue
        threshold = threshold or cfg.failure_threshold
        rules = rule_cache.get(cfg.rule_dirs)
        selected = select_rules(rules, args.select if args.select is not None else cfg.select,
                                cfg.extend_select + args.extend_select, cfg.ignore + args.ignore)
        metas.update(rule_metas(rules))
        shown = job.path if job.real is not None else (args.stdin_filename or "-")
        try:
            if job.real is None:
                data = sys.stdin.buffer.read()
            else:
                with open(job.real, "rb") as fh:
                    data = fh.read()
            text = decode(shown, data)
        except InputError as exc:
            print(f"megalint: {exc}", file=sys.stderr)
            input_errors += 1
            continue
        except OSError as exc:
            print(f"megalint: {shown}: cannot read: {exc.strerror or exc}", file=sys.stderr)
            input_errors += 1
            continue
        settings = Settings(
            rules=selected, megatron_version=args.megatron_version or cfg.megatron_version,
            gpu=args.gpu or cfg.gpu, assume={**cfg.assume, **cli_assume},
            root_dir=cfg.root if cfg.path else os.getcwd(),
            follow_source_outside_root=cfg.follow_source_outside_root, with_memory=not args.no_memory)
        try:
            result = lint_text(shown, text, settings)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        except Exception as exc:
            exc.megalint_file = shown  # type: ignore[attr-defined]
            raise
        diags = _finalise(result, cfg, shown, text, rules, selected)
        if args.fix or args.diff:
            diags, changed, count = _apply_fixes(shown, job, text, diags, settings, cfg, rules, selected, args)
            fixes_applied += count
            if changed is not None and args.diff:
                sys.stdout.write(changed)
        sources.update(result.sources)
        all_diags.extend(diags)
    if args.diff:
        return EXIT_CLEAN if not input_errors else EXIT_USAGE
    _emit(targets, all_diags, sources, metas, args)
    if fixes_applied and not args.diff:
        print(f"Fixed {fixes_applied} finding(s).", file=sys.stderr)
    if input_errors:
        return EXIT_USAGE
    if args.exit_zero:
        return EXIT_CLEAN
    level = Severity(threshold or "warning").rank
    return EXIT_FINDINGS if any(d.severity.rank >= level for d in all_diags) else EXIT_CLEAN


def _finalise(result, cfg: Config, shown: str, text: str, rules: RuleSet, selected: RuleSet) -> list[Diagnostic]:
    diags = []
    ignores = [codes for pat, codes in cfg.per_file_ignores.items()
               if fnmatch.fnmatch(shown, pat) or fnmatch.fnmatch(os.path.basename(shown), pat)]
    for d in result.diagnostics:
        if any(_matches(t, d.code, d.name) for codes in ignores for t in codes):
            continue
        sev = severity_of(d.code, d.name, d.severity, cfg.severity)
        diags.append(replace(d, severity=sev) if sev != d.severity else d)
    known = {r.code: r.name for r in rules}
    known.update({c: m.name for c, m in SUPPRESSION_RULES.items()})
    directives = parse_directives(text, shown)
    undecided = {u.rule.code for u in result.evaluation.undecided}
    kept, extra = apply_suppressions(diags, directives, known, enabled=[r.code for r in selected] + list(SUPPRESSION_RULES),
                                     undecided=undecided)
    return sorted(kept + extra, key=lambda d: d.sort_key())


def _apply_fixes(shown, job, text, diags, settings, cfg, rules, selected, args):
    from megalint.fix import apply_fixes, bash_parses, unified_diff

    def relint(new_text: str):
        res = lint_text(shown, new_text, settings)
        return _finalise(res, cfg, shown, new_text, rules, selected)

    res = apply_fixes(text, diags, unsafe=args.unsafe_fixes, reparse_ok=bash_parses, relint=relint, path=shown)
    if not res.changed:
        return diags, None, 0
    if args.diff:
        return res.remaining, unified_diff(text, res.text, shown), res.fixed_count
    if job.real is not None:
        newline_safe = res.text
        with open(job.real, "w", encoding="utf-8", newline="") as fh:
            fh.write(newline_safe)
    else:
        sys.stdout.write(res.text)
    return list(res.remaining), None, res.fixed_count


def _emit(targets, diags, sources, metas, args) -> None:
    step_summary = None
    if os.environ.get("GITHUB_STEP_SUMMARY"):
        from megalint.output.github import summary_writer

        step_summary = summary_writer(os.environ["GITHUB_STEP_SUMMARY"])
    for target in targets:
        to_file = target.path is not None
        is_tty = (not to_file) and sys.stdout.isatty()
        color = target.format in HUMAN_FORMATS and color_enabled(args.color, is_tty)
        width = 100
        if is_tty:
            try:
                width = os.get_terminal_size().columns
            except OSError:
                pass
        opts = RenderOptions(color=color, width=width, root=os.environ.get("GITHUB_WORKSPACE") or os.getcwd(),
                             unsafe_fixes=args.unsafe_fixes, step_summary=step_summary, tool_version=__version__)
        text = render(target.format, diags, sources, metas, opts)
        if to_file:
            with open(target.path, "w", encoding="utf-8") as fh:
                fh.write(text)
        else:
            sys.stdout.write(text)
            if text and not text.endswith("\n"):
                sys.stdout.write("\n")


def handle_errors(fn, argv) -> int:
    try:
        return fn(argv)
    except (UsageError, ConfigError) as exc:
        print(f"megalint: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except RuleFileError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
