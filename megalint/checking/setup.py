"""What each configuration means for the files under it: the rules loaded for it, those it and
the command line select, and the pipeline's settings. Made once per configuration of a run.

A setup is first only its configuration: the rules are loaded, and the configuration checked
against them, when a file must be checked or a report names a rule (`Setup.ready`). A run whose
every file is in the cache of results loads no rule and imports no part of the linter."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from megalint.config import Config, config_in, load_config
from megalint.discovery import Excludes

if TYPE_CHECKING:
    from megalint.engine import Rule, RuleSet
    from megalint.pipeline import Settings

DEFAULT_THRESHOLD = "warning"


@dataclass(frozen=True)
class AnalysisOptions:
    """What the command line asks of every file, over its configuration."""

    select: Sequence[str] | None = None  # None: the configuration's selection stands
    extend_select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    rule_dirs: Sequence[str] = ()  # extra folders of YAML rules
    megatron_version: str | None = None
    gpu: str | None = None
    megatron_roots: Sequence[str] = ()  # Megatron or fork trees the launches run on
    assume: Mapping[str, str] = field(default_factory=dict)
    with_memory: bool = True
    exclude: Sequence[str] = ()  # gitignore-style, relative to the working folder
    failure_threshold: str | None = None


def load_rules(paths: list[str]) -> RuleSet:
    """The packaged rules and those of `paths`: the engine is imported when a setup is first made."""
    from megalint.engine import load_rules as load

    return load(paths)


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
class Chosen:
    """What a configuration selects once its rules are loaded."""

    rules: RuleSet  # every rule loaded for it
    selected: RuleSet
    codes_on: set[str]  # selected rule codes
    known: dict[str, Rule]  # every rule by code
    pfi: list[tuple[Excludes, list[str]]]


class Setup:
    """What one configuration means for the files under it."""

    def __init__(
        self, config: Config, threshold: str, choose: Callable[[], Chosen], settle: Callable[[RuleSet], Settings]
    ):
        self.config = config
        self.threshold = threshold
        self._choose = choose
        self._settle = settle
        self._chosen: Chosen | None = None
        self._settings: Settings | None = None

    def ready(self) -> Chosen:
        """The rules loaded and selected; raises the configuration's error (an unknown rule code)."""
        if self._chosen is None:
            self._chosen = self._choose()
        return self._chosen

    def prepare(self) -> None:
        """Make all a check reads: the rules selected and the pipeline's settings."""
        if self._settings is None:
            self._settings = self._settle(self.selected)

    @property
    def rules(self) -> RuleSet:
        return self.ready().rules

    @property
    def selected(self) -> RuleSet:
        return self.ready().selected

    @property
    def codes_on(self) -> set[str]:
        return self.ready().codes_on

    @property
    def known(self) -> dict[str, Rule]:
        return self.ready().known

    @property
    def settings(self) -> Settings:
        """The pipeline's settings (imports the pipeline: a report that only names rules needs none)."""
        self.prepare()
        assert self._settings is not None
        return self._settings

    @property
    def pfi(self) -> list[tuple[Excludes, list[str]]]:
        return self.ready().pfi


class Setups:
    """The setups of the files of one run, one per configuration, and what the run excludes."""

    def __init__(self, options: AnalysisOptions, configs: Configs, note: Callable[[str], None] | None = None):
        self.options = options
        # Told, once per configuration, what the run should say about it (a version checked
        # against another release's catalogue).
        self.note = note
        self.configs = configs
        self.cli_excludes = Excludes(list(options.exclude), os.getcwd())
        self._excludes: dict[int, Excludes] = {}
        self._rules: dict[tuple[str, ...], RuleSet] = {}
        self._setups: dict[int, Setup] = {}

    def rules_for(self, dirs: list[str]) -> RuleSet:
        key = tuple(dirs) + tuple(self.options.rule_dirs)
        if key not in self._rules:
            self._rules[key] = load_rules(list(key))
        return self._rules[key]

    def for_path(self, path: str) -> Setup:
        return self.setup(self.configs.for_path(path))

    def setup(self, cfg: Config) -> Setup:
        key = id(cfg)
        if key not in self._setups:
            self._setups[key] = self._make_setup(cfg)
        return self._setups[key]

    def used(self) -> list[Config]:
        """The configuration of each setup made so far."""
        return [s.config for s in self._setups.values()]

    def _make_setup(self, cfg: Config) -> Setup:
        opts = self.options
        version_note = cfg.version_note() if opts.megatron_version is None else None
        if version_note is not None and self.note is not None:
            self.note(version_note)
        threshold = opts.failure_threshold or cfg.failure_threshold or DEFAULT_THRESHOLD
        return Setup(cfg, threshold, lambda: self._choose(cfg), lambda selected: self._settle(cfg, selected))

    def _choose(self, cfg: Config) -> Chosen:
        from megalint.engine import RuleSet
        from megalint.selection import Catalog, Layer, check_selectors, selected_codes, split_selectors

        opts = self.options
        rules = self.rules_for(cfg.rule_dirs)
        known = rules.by_code()
        catalog = Catalog(known)
        for key in ("select", "extend-select", "ignore"):
            for s in getattr(cfg, key.replace("-", "_")) or ():
                for part in split_selectors([s]):
                    if not catalog.known(part):
                        raise cfg.error_at((key,), catalog.unknown_message(part, f"`{key}`"), s)
        for s in cfg.severity:
            if not catalog.known(s):
                raise cfg.error_at(("severity", s), catalog.unknown_message(s, "`severity`"))
        for pattern, codes in cfg.per_file_ignores.items():
            for s in codes:
                for part in split_selectors([s]):
                    if not catalog.known(part):
                        raise cfg.error_at(
                            ("per-file-ignores", pattern), catalog.unknown_message(part, "`per-file-ignores`"), s
                        )
        cli_selectors = (
            ("--select", opts.select or ()),
            ("--extend-select", opts.extend_select),
            ("--ignore", opts.ignore),
        )
        for option, selectors in cli_selectors:
            check_selectors(catalog, selectors, option)
        names = {c: r.name for c, r in known.items()}
        preview = {r.code for r in rules if r.status == "preview"}
        layers = [
            Layer(
                None if cfg.select is None else split_selectors(cfg.select),
                split_selectors(cfg.extend_select),
                split_selectors(cfg.ignore),
            ),
            Layer(opts.select, opts.extend_select, opts.ignore),
        ]
        on = selected_codes(names, layers, preview)
        selected = RuleSet([r for r in rules if r.code in on])
        pfi = [
            (Excludes([pattern], cfg.root), split_selectors(codes_)) for pattern, codes_ in cfg.per_file_ignores.items()
        ]
        return Chosen(rules, selected, on, known, pfi)

    def _settle(self, cfg: Config, selected: RuleSet) -> Settings:
        from megalint.pipeline import Settings

        opts = self.options
        settings = Settings(
            rules=selected,
            megatron_version=opts.megatron_version or cfg.megatron_version,
            gpu=opts.gpu or cfg.gpu,
            assume={**cfg.assume, **opts.assume},
            root_dir=cfg.root if cfg.path else os.getcwd(),
            follow_source_outside_root=cfg.follow_source_outside_root,
            with_memory=opts.with_memory,
            source_roots=(*opts.megatron_roots, *cfg.megatron_roots),
        )
        if cfg.max_file_size is not None:
            settings.max_file_size = cfg.max_file_size
        return settings

    def excluded(self, path: str, is_dir: bool) -> bool:
        if self.cli_excludes.match(path, is_dir):
            return True
        cfg = self.configs.for_path(path, is_dir)
        if not cfg.exclude:
            return False
        if id(cfg) not in self._excludes:
            self._excludes[id(cfg)] = Excludes(cfg.exclude, cfg.root)
        return self._excludes[id(cfg)].match(path, is_dir)
