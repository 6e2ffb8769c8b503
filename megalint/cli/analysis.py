"""The options of every command that lints a script (`megalint [PATHS]`, `megalint explain`):
the rules selected, the configuration, and what the job runs on."""

from __future__ import annotations

import argparse
import os

from megalint.errors import UsageError

TYPE_CHECKING = False  # `typing` is not imported for it: `megalint --help` builds these options
if TYPE_CHECKING:
    from collections.abc import Sequence

    from megalint.checking.setup import Setups


def add_analysis_options(p: argparse.ArgumentParser) -> None:
    """Options of every command that lints: rules, configuration and what the job runs on."""
    sel = p.add_argument_group("rule selection (a code, a rule name, a code prefix or ALL)")
    sel.add_argument(
        "--select", action="append", default=None, metavar="RULE", help="only these rules (comma-separated or repeated)"
    )
    sel.add_argument("--extend-select", action="append", default=[], metavar="RULE", help="these rules as well")
    sel.add_argument("--ignore", action="append", default=[], metavar="RULE", help="not these rules")
    sel.add_argument("--rule-dir", action="append", default=[], metavar="DIR", help="an extra folder of YAML rules")
    inp = p.add_argument_group("what the script runs on")
    inp.add_argument(
        "--megatron-version", help="Megatron-LM version of the job (default: the configuration, else the newest)"
    )
    inp.add_argument("--gpu", help="GPU model when the script does not say (h100, a100-80gb, v100 …)")
    add_assume(inp)
    inp.add_argument(
        "--megatron-root",
        action="append",
        default=[],
        metavar="PATH",
        help="a Megatron-LM or fork checkout the launches run on, when the script lives outside it (repeatable)",
    )
    inp.add_argument("--no-memory", action="store_true", help="skip the memory estimate")
    cfg = p.add_argument_group("configuration")
    cfg.add_argument("--config", metavar="FILE", help="a megalint.toml or pyproject.toml to use for every file")
    cfg.add_argument("--isolated", action="store_true", help="ignore every configuration file")


def check_analysis_options(args: argparse.Namespace) -> None:
    if args.gpu is not None:
        from megalint.hardware.profiles import find_gpu

        if find_gpu(args.gpu) is None:
            raise UsageError(f"--gpu: unknown GPU `{args.gpu}` (e.g. h100, a100-80gb, v100)")
    for root in args.megatron_root:
        if not os.path.isdir(root):
            raise UsageError(f"--megatron-root: `{root}` is not a folder")
    if args.megatron_version is not None:
        check_megatron_version(args.megatron_version)


def check_megatron_version(text: str) -> None:
    """A version megalint cannot read or knows nothing near is an error; one it checks against
    another release's catalogue is said on standard error, never silently."""
    from megalint.cli.guard import note
    from megalint.megatron.catalogue_choice import unknown_version, version_for
    from megalint.megatron.versions import VersionError, parse_version

    try:
        parse_version(text)
    except VersionError:
        raise UsageError(
            f"--megatron-version: `{text}` is not a Megatron-LM version (e.g. 0.15, core_v0.12.0, HEAD)"
        ) from None
    unknown = unknown_version(text)
    if unknown is not None:
        raise UsageError(f"--megatron-version: {unknown}")
    _version, fallback = version_for(text)
    if fallback is not None:
        note(f"--megatron-version {text}: {fallback}")


def parse_assume(items: list[str], *, allow_empty_name: bool = False) -> dict[str, str]:
    """--assume's NAME=VALUE items by name (`megalint memory` has always taken an empty NAME)."""
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not (name.strip() or allow_empty_name):
            raise UsageError(f"--assume takes NAME=VALUE, got `{item}`")
        out[name.strip()] = value
    return out


def analysis_setups(
    args: argparse.Namespace, *, exclude: Sequence[str] = (), failure_threshold: str | None = None
) -> Setups:
    """The setup of each file, from the analysis options and the configuration files."""
    # Imported here: the options alone (`--help`) need none of the pipeline.
    from megalint.checking.setup import AnalysisOptions, Configs, Setups
    from megalint.selection import split_selectors

    configs = Configs(args.config, args.isolated)  # read first: their errors come before the options'
    options = AnalysisOptions(
        select=None if args.select is None else split_selectors(args.select),
        extend_select=split_selectors(args.extend_select),
        ignore=split_selectors(args.ignore),
        rule_dirs=args.rule_dir,
        megatron_version=args.megatron_version,
        gpu=args.gpu,
        megatron_roots=tuple(args.megatron_root),
        assume=parse_assume(args.assume),
        with_memory=not args.no_memory,
        exclude=exclude,
        failure_threshold=failure_threshold,
    )
    from megalint.cli.guard import note

    return Setups(options, configs, note)


def add_assume(group: argparse._ActionsContainer) -> None:
    """--assume, the same for every command that lints a script."""
    group.add_argument(
        "--assume",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value for an environment input, e.g. --assume NNODES=4 (repeatable)",
    )
