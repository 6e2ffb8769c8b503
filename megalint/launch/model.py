"""The launch model: what one launch command would start, as megalint understood it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypedDict

# Headers are read by the shell stage, which runs first; the launch model takes them from there.
from megalint.shell.headers import SchedulerHeader as SchedulerHeader
from megalint.shell.values import Unknown, Word
from megalint.source import Span


class QuantityJson(TypedDict):
    value: int | None
    how: str
    unknown: str | None  # why the value is not known
    at: list[str]  # where the words it was computed from are
    assumed: list[str]  # the defaults of inputs it rests on


@dataclass(frozen=True)
class Quantity:
    """An integer that may be unknown, with the words it was computed from and how."""

    value: int | None
    how: str  # e.g. "torchrun --nproc-per-node", "#SBATCH --nodes", "default of torchrun"
    words: tuple[Word, ...] = ()
    unknown: Unknown | None = None
    # The defaults of inputs the value rests on (`--nnodes ${NNODES:-2}`): the environment may
    # set another value, so a finding that reads it says so and is reported one severity lower.
    assumed: tuple[str, ...] = ()

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def span(self) -> Span | None:
        for w in self.words:
            if w.span is not None:
                return w.span
        return None

    def to_json(self) -> QuantityJson:
        return {
            "value": self.value,
            "how": self.how,
            "unknown": None if self.unknown is None else self.unknown.reason,
            "at": [str(w.span) for w in self.words if w.span is not None],
            "assumed": list(self.assumed),
        }


@dataclass
class Launch:
    """One run of a Megatron entry point: its launcher, arguments, environment and world."""

    # torchrun | torch.distributed.launch | torch.distributed.run | srun | deepspeed | mpirun | python;
    # "fragment" for arguments a file sets without launching them (launch/fragments.py)
    launcher: str
    command: tuple[Word, ...]  # the whole command as run, launcher words included
    entry: Word | None  # the Python entry point, e.g. pretrain_gpt.py
    argv: tuple[Word, ...]  # the arguments given to the entry point
    env: dict[str, Word]  # the environment the launch runs with (exports, prefixes)
    nproc_per_node: Quantity
    nnodes: Quantity
    world_size: Quantity
    span: Span  # the launch command
    condition: tuple[str, ...] = ()  # the undecided branches taken to reach it
    launcher_words: tuple[Word, ...] = ()  # srun/torchrun options, for rules that need them
    notes: list[str] = field(default_factory=list)
    variable: str | None = None  # the variable a fragment (launcher "fragment") is the value of
    # The entry point's path is built on `pwd`/$PWD (launch/extract.py says so in `notes`)
    entry_through_working_directory: bool = False

    @property
    def is_megatron(self) -> bool:
        return self.entry is not None

    @property
    def entry_name(self) -> str | None:
        """The entry point as far as it is known: its text, or `…/pretrain_gpt.py` when only the
        folder it is in is unknown (`$HOME/Megatron-LM/pretrain_gpt.py`); None when even its
        name is not known."""
        return None if self.entry is None else entry_name(self.entry)

    @property
    def entry_path(self) -> str | None:
        """The entry point's path for binding: None when it is not known, or known only through
        a guess of the working directory (`` `pwd`/pretrain_gpt.py ``): the script that runs may
        then be any project's, whose parser is not Megatron-LM's alone."""
        if self.entry is None or self.entry_through_working_directory:
            return None
        return self.entry.text


def entry_name(word: Word) -> str | None:
    """A script path as far as it is known: all of it, or `…/name.py` after an unknown folder."""
    if word.text is not None:
        return word.text
    suffix = word.known_suffix
    slash = suffix.find("/")
    if slash < 0 or not suffix.endswith(".py") or suffix.endswith("/.py"):
        return None
    return "…" + suffix[slash:]
