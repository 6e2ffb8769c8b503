"""Which files of a repository the bench reads, and the Megatron flags each one writes.

Selection (the survey's rule): a shell-like file (megalint's own rule: .sh/.bash/.slurm/.sbatch…,
or an extensionless file with an sh/bash shebang), not a link, at most 1 MiB, whose text mentions a
Megatron entry point or a model-parallel flag (`MENTIONS_MEGATRON`). The shell-like files it leaves
out that still write Megatron flags are counted apart.

A Megatron flag is a word `--name` (or `--name=value`) outside a comment whose name, with `_`
read as `-`, is an option string of a catalogue megalint ships (any Megatron-LM release). The
tracked flags (`TRACKED`) are the parallel and batch sizes whose values the rules need most.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator

from megalint.discovery import is_shell_script

MAX_BYTES = 1 << 20
# Megatron's entry points, and the model-parallel flags in both spellings (`--tensor_model_parallel_size`
# is what Megatron-LLM and older forks' scripts write).
MENTIONS_MEGATRON = re.compile(
    r"(pretrain_\w*\.py|posttrain_\w*\.py|finetune_\w*\.py|train_rl\.py|tasks/main\.py|"
    r"--tensor[-_]model[-_]parallel[-_]size|--pipeline[-_]model[-_]parallel[-_]size|--context[-_]parallel[-_]size|"
    r"--expert[-_]model[-_]parallel[-_]size|--expert[-_]tensor[-_]parallel[-_]size|--sequence[-_]parallel|"
    r"--virtual[-_]pipeline[-_]model[-_]parallel[-_]size|--num[-_]layers[-_]per[-_]virtual[-_]pipeline[-_]stage)"
)
TRACKED = frozenset(
    {
        "--tensor-model-parallel-size",
        "--pipeline-model-parallel-size",
        "--context-parallel-size",
        "--expert-model-parallel-size",
        "--expert-tensor-parallel-size",
        "--virtual-pipeline-model-parallel-size",
        "--num-layers-per-virtual-pipeline-stage",
        "--micro-batch-size",
        "--global-batch-size",
        "--seq-length",
        "--num-layers",
    }
)
FLAG_WORD = re.compile(r"(?<![\w$-])--[A-Za-z][\w-]*")
# A comment starts at a `#` that begins a word (`${#x}` and `$#` do not).
COMMENT = re.compile(r"(?:^|(?<=\s))#.*")

Site = tuple[int, str]  # (line, flag) in one file, the flag in its normal spelling


def normal_flag(word: str) -> str:
    """`--tensor_model_parallel_size=2` → `--tensor-model-parallel-size`."""
    name = word.split("=", 1)[0]
    return "--" + name[2:].replace("_", "-")


def candidates(checkout: str, folders: Iterable[str]) -> Iterator[str]:
    """The readable shell-like files under the folders of a checkout, sorted, `.git` skipped."""
    seen: set[str] = set()
    for folder in folders:
        top = os.path.normpath(os.path.join(checkout, folder))
        for root, dirs, names in os.walk(top):
            dirs[:] = sorted(d for d in dirs if d != ".git")
            for n in sorted(names):
                p = os.path.join(root, n)
                if p in seen or os.path.islink(p) or not os.path.isfile(p) or os.path.getsize(p) > MAX_BYTES:
                    continue
                seen.add(p)
                if is_shell_script(p):
                    yield p


def select_files(checkout: str, folders: Iterable[str], known: frozenset[str]) -> tuple[list[str], list[str]]:
    """(the files the bench reads: shell-like and mentioning Megatron; the shell-like files left
    out that still write Megatron flags, so that what the selection misses is seen)."""
    chosen, left_out = [], []
    for p in candidates(checkout, folders):
        try:
            with open(p, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            continue
        if MENTIONS_MEGATRON.search(text):
            chosen.append(p)
        elif flag_sites(text, known):
            left_out.append(p)
    return chosen, left_out


def flag_sites(text: str, known: frozenset[str]) -> list[Site]:
    """The Megatron flags a file writes, one per occurrence, outside comments."""
    out: list[Site] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        code = COMMENT.sub("", line)
        for m in FLAG_WORD.finditer(code):
            flag = normal_flag(m.group(0))
            if flag in known:
                out.append((lineno, flag))
    return out


def known_flags(option_strings: Iterable[str]) -> frozenset[str]:
    """The normal spellings of catalogue option strings (long options only)."""
    return frozenset(normal_flag(o) for o in option_strings if o.startswith("--"))
