"""The files of one run: found, read, checked with the setup of their configuration, fixed and
written back; each problem with a file is told as it is met, and the others are still checked."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

from megalint import probes
from megalint.checking.cache import CODE_SETS, FOLDER, ResultCache, digest, rules_digest
from megalint.checking.files import read_script, read_stream, write_fixed
from megalint.checking.outcome import FixMode
from megalint.checking.parallel import CacheFor, Todo, check_all, default_jobs, look_up
from megalint.checking.setup import Setup, Setups
from megalint.config import Config
from megalint.diagnostics import Diagnostic, Severity
from megalint.discovery import STDIN, Job, discover, shown_name
from megalint.errors import InputError, RuleFileError, UsageError
from megalint.source import SourceFile, decode

if TYPE_CHECKING:
    from megalint.engine import RuleInfo

BOM = "\ufeff"


@dataclass(frozen=True)
class RunOptions:
    """Which files a run checks and what becomes of their fixes."""

    paths: Sequence[str] = ()  # scripts and folders; none: the working folder
    force_exclude: bool = False  # the excludes apply to the paths named too
    stdin_filename: str | None = None  # the name standard input is reported under
    fixes: FixMode = FixMode()
    jobs: int | None = None  # worker processes (1: this one); None: the configuration's, else every core
    cache: bool = True  # False: neither read nor write the cache of results (--no-cache)

    @property
    def fixes_standard_input(self) -> bool:
        """Whether the fixed standard input goes to standard output (the report then goes to standard error)."""
        return self.fixes.fix and not self.fixes.diff and STDIN in self.paths


class KnownRules(Mapping[str, "RuleInfo"]):
    """Every rule a report may name: the suppression rules (described to the outputs even when
    no file could be linted) and the rules of each setup of the run. Worked out when a report
    first asks: a clean run read from the cache of results never does, and loads no rule."""

    def __init__(self) -> None:
        self._setups: dict[int, Setup] = {}
        self._made: dict[str, RuleInfo] | None = None

    def add(self, setup: Setup) -> None:
        if self._made is not None:
            self._made.update(setup.known)
        else:
            self._setups.setdefault(id(setup), setup)

    def _all(self) -> dict[str, RuleInfo]:
        if self._made is None:
            from megalint.suppress import suppression_rules

            made: dict[str, RuleInfo] = dict(suppression_rules())
            for setup in self._setups.values():
                made.update(setup.known)
            self._made = made
        return self._made

    def __getitem__(self, code: str) -> RuleInfo:
        return self._all()[code]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


@dataclass
class RunResult:
    """What a run found in all its files."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, SourceFile] = field(default_factory=dict)
    known: KnownRules = field(default_factory=KnownRules)
    fixed: int = 0
    any_diff: bool = False
    failing: bool = False  # findings at or above a file's failure threshold
    input_errors: int = 0  # files that do not exist or cannot be read
    internal_errors: int = 0  # files megalint failed on
    checked: int = 0  # files linted (standard input included)
    passed_through: int = 0  # standard input excluded with --force-exclude
    rule_errors: int = 0  # rules that failed on a file (each told as a note)
    code: set[str] = field(default_factory=set)  # the Python files that decided the findings
    # What the checks asked the file system (probes.py): path -> kind of file; -1 where two
    # checks of the run were answered differently (a file made meanwhile), which nothing matches.
    probes: dict[str, int] = field(default_factory=dict)


@dataclass
class _Item:
    """One file of a run, read and ready to check, or what stopped it being read."""

    shown: str
    real: str | None  # None: standard input
    root: str | None = None  # fixes are written inside this folder only
    setup: Setup | None = None
    text: str = ""
    bom: str = ""
    data: bytes = b""  # the file as read: fixes are written only while it still holds this
    problem: str | None = None  # told as the file is met; the file is not checked
    error: Exception | None = None  # a configuration error, raised as the file is met
    skip: bool = False  # standard input excluded with --force-exclude: passed through


@probes.one_run()  # each call is a run: what its scripts share is looked at once
def check_files(
    setups: Setups,
    options: RunOptions,
    *,
    stdin: TextIO,
    note: Callable[[str], None],
    write: Callable[[str], None],
) -> RunResult:
    """Check the files of `options.paths`; `note` is told of each problem with a file as it is met,
    `write` (standard output) takes each diff and the fixed standard input.

    The files are read first, then checked (in `options.jobs` processes, from the cache where it
    holds them), then reported in the order they were found: whatever the number of processes and
    whatever the cache held, a run tells and returns the same."""
    run = RunResult()
    items: list[_Item] = []

    def problem(message: str) -> None:
        items.append(_Item("", None, problem=message))

    for job in discover(list(options.paths) or ["."], setups.excluded, problem, options.force_exclude):
        items.append(_item(job, setups, options, stdin))
    cache_for = cached(options, setups)
    candidates = [i for i in items if i.setup is not None and i.problem is None]
    found = look_up(_todo(candidates), options.fixes, cache_for)
    if not found.hits or None in found.hits:
        # A file to check (or none read): every setup is made now, in the order of the files, and
        # a configuration's error stops the run at its first file. When every file is in the
        # cache, each setup was made by the run that filled it, from the same configuration,
        # rules and options (all in the key), so none can fail: none is made.
        for item in items:
            if item.setup is not None:
                _ready(item)
        found = found.without([k for k, i in enumerate(candidates) if i.setup is None])
    outcomes = check_all(_todo(items), options.fixes, jobs(options, setups), found)
    # A run that writes results keeps the folder small (once a day: pruning.py).
    wrote = any(c is not None and h is None for c, h in zip(found.caches, found.hits, strict=True))
    for item in items:
        if item.error is not None:
            raise item.error
        if item.skip:
            run.passed_through += 1
            if options.fixes_standard_input:
                write(item.text)
            continue
        if item.problem is not None:
            if item.setup is not None:
                run.known.add(item.setup)
            note(item.problem)
            run.input_errors += 1
            continue
        setup = item.setup
        assert setup is not None
        run.known.add(setup)
        result = next(outcomes)
        run.checked += 1
        if isinstance(result, Exception):
            raise result
        if isinstance(result, str):
            note(result)
            run.internal_errors += 1
            continue
        outcome = result
        for message in outcome.notes + outcome.rule_errors:
            note(message)
        run.rule_errors += len(outcome.rule_errors)
        if outcome.fixed_text is not None:
            if item.real is None:
                write(outcome.fixed_text)
            elif outcome.changed:
                fixed = (item.bom + outcome.fixed_text).encode("utf-8")
                unwritten = write_fixed(item.real, item.root or os.curdir, item.shown, item.data, fixed)
                if unwritten is not None:
                    # The file is as it was: its findings are those of its text, fixable ones included.
                    note(unwritten)
                    run.input_errors += 1
                    from megalint.checking.one_file import check_text

                    outcome = check_text(item.text, item.shown, setup, FixMode())
        if outcome.diff:
            run.any_diff = True
            write(outcome.diff)
        run.fixed += outcome.fixed
        run.sources.update(outcome.sources)
        run.code.update(outcome.code)
        probes.gather(run.probes, outcome.probes)
        run.diagnostics.extend(outcome.diagnostics)
        level = None if setup.threshold == "none" else Severity(setup.threshold).rank
        run.failing = run.failing or (level is not None and any(d.severity.rank >= level for d in outcome.diagnostics))
    root = cache_root(options, setups) if wrote else None
    if root is not None:
        from megalint.checking.pruning import prune

        prune(os.path.join(root, FOLDER), CODE_SETS)
    return run


def _item(job: Job, setups: Setups, options: RunOptions, stdin: TextIO) -> _Item:
    shown, cfg_path = _names(job, options.stdin_filename)
    item = _Item(shown, job.real, job.root)
    try:
        cfg = setups.configs.for_path(cfg_path)
        if job.real is None and options.force_exclude and options.stdin_filename and setups.excluded(cfg_path, False):
            item.skip = True
            item.text = stdin.read() if options.fixes_standard_input else ""
            return item
        item.setup = setups.setup(cfg)
    except (UsageError, RuleFileError) as exc:
        item.error = exc
        return item
    try:
        data = read_stream(stdin.buffer, shown) if job.real is None else read_script(job.real, shown)
        item.text = decode(shown, data)
    except InputError as exc:
        item.problem = str(exc)
    except OSError as exc:
        item.problem = f"{shown}: cannot read: {exc.strerror or exc}"
    else:
        item.bom = BOM if data.startswith(BOM.encode()) else ""
        item.data = data
    return item


def _todo(items: list[_Item]) -> list[Todo]:
    """The files to check (or read from the cache): those read, under a configuration."""
    return [(i.text, i.shown, setup) for i in items if (setup := i.setup) is not None and i.problem is None]


def _ready(item: _Item) -> None:
    """Make the item's setup; a configuration error becomes the item's, raised as it is met."""
    assert item.setup is not None
    try:
        item.setup.ready()
    except (UsageError, RuleFileError) as exc:
        item.error = exc
        item.setup = None


def _run_config(setups: Setups) -> Config:
    """The configuration of the working folder: the one that says how the run itself goes."""
    return setups.configs.for_path(os.getcwd(), is_dir=True)


def jobs(options: RunOptions, setups: Setups) -> int:
    """How many processes check the files."""
    if options.jobs is not None:
        return options.jobs
    return _run_config(setups).jobs or default_jobs()


def cache_root(options: RunOptions, setups: Setups) -> str | None:
    """The folder whose `.megalint_cache/` keeps the run's results; None with --no-cache,
    `cache = false` or MEGALINT_NO_CACHE set."""
    cfg = _run_config(setups)
    if not (options.cache and cfg.cache and not os.environ.get("MEGALINT_NO_CACHE")):
        return None
    return cfg.root if cfg.path else os.getcwd()


def cached(options: RunOptions, setups: Setups) -> CacheFor:
    """The cache of results of each setup, in `.megalint_cache/` at the root of the run."""
    root = cache_root(options, setups)
    made: dict[int, ResultCache | None] = {}

    def cache_for(setup: Setup) -> ResultCache | None:
        if root is None:
            return None
        if id(setup) not in made:
            made[id(setup)] = ResultCache(root, setup_key(setups, setup))
        return made[id(setup)]

    return cache_for


def setup_key(setups: Setups, setup: Setup) -> str:
    """What the findings of a file depend on in its setup: the rule files, the configuration's
    text, the command line's analysis options, and what they make of each other."""
    from megalint.engine.rule_cache import wheel_rules_key

    opts = setups.options
    cfg = setup.config
    # The packaged rules as the rule loading names them; the user's folders read. What the setup
    # makes of them (the codes selected, the pipeline's settings) follows from these, the
    # configuration and the options: the key needs no rule loaded.
    packaged = wheel_rules_key()
    if packaged is None:
        from megalint.engine.loader import packaged_rules_key

        packaged = packaged_rules_key()
    rules = digest(packaged, rules_digest([*cfg.rule_dirs, *opts.rule_dirs]))
    # The working folder too: the paths given on the command line (--megatron-root, --rule-dir)
    # are read from it.
    return digest(rules, str(cfg.path), cfg.root, os.getcwd(), cfg.text, repr(opts), setup.threshold)


def _names(job: Job, stdin_filename: str | None) -> tuple[str, str]:
    """(the name findings carry, the path whose configuration applies)."""
    if job.real is not None:
        return job.path, job.real
    if stdin_filename:
        return shown_name(os.path.normpath(stdin_filename)), stdin_filename
    return STDIN, os.path.join(os.getcwd(), STDIN)
