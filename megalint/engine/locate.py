"""How the engine finds places in the script: the `Locator` protocol.

The engine knows rules and contexts; only the pipeline knows where a value was written. For each
launch (and path) it hands the engine a Locator, and every `at`, label and fix edit of a rule is
one call on it. A method answers None (or an empty list) when the place does not exist or cannot
be pointed at honestly (a flag supplied by `"$@"`); the engine then falls back: the primary span to
`launch()`, a label is left out, a fix is dropped.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from megalint.diagnostics import Edit
from megalint.source import Span


@runtime_checkable
class Locator(Protocol):
    # Places. `dest` is a Megatron argument's dest (`tensor_model_parallel_size`), as in
    # the context's `args`; the locator knows every spelling and alias of the option.

    def launch(self) -> Span:
        """The launch command (the whole command, or its first word)."""

    def entry(self) -> Span | None:
        """The Python entry point word (`pretrain_gpt.py`)."""

    def flag(self, dest: str) -> Span | None:
        """The option word of the occurrence that takes effect (argparse: the last one)."""

    def value(self, dest: str) -> Span | None:
        """The value word of that occurrence; for store_true/false options, the option word."""

    def origins(self, dest: str) -> list[Span]:
        """Where the value came from, nearest first: `TP=8` for `--tensor-model-parallel-size $TP`."""

    def launcher(self, key: str) -> Span | None:
        """A launcher quantity (`nproc_per_node`, `nnodes`, `world_size`: the words it was read
        from, a `#SBATCH` line included) or a launcher option as written (`--master-port`)."""

    def env(self, name: str) -> Span | None:
        """Where the environment variable is set for this launch (export, prefix assignment)."""

    def gpu(self) -> Span | None:
        """Where the GPU model was learnt (`#SBATCH --gpus=h100:8`, a constraint ...)."""

    def last_export(self) -> Span | None:
        """The last `export` before the launch, where new exports are inserted."""

    def item(self, obj: dict[str, Any]) -> Span | None:
        """The place of one element of a context list (`problems`, `shell`): each element
        carries whatever the producer needs to find it again (an argv `index`, a span key ...)."""

    def expansion(self, obj: dict[str, Any], nth: int) -> Span | None:
        """The `nth` (from 1) expansion on the launch line that explains one element of `problems`
        (its `expansions`): the unquoted `${A[@]}` that cut a word, a variable expanded twice."""

    # Edit builders. Each answers the edits, or None when the edit cannot be made safely
    # (the value comes from `$@`, the flag is set in a sourced file that is not ours ...).

    def replace_flag(self, dest: str, text: str) -> list[Edit] | None:
        """Replace the option that takes effect, its value words included, by `text`; remove
        earlier occurrences of it."""

    def remove_flag(self, dest: str) -> list[Edit] | None:
        """Remove every occurrence of the option, value words included."""

    def replace_value(self, dest: str, text: str) -> list[Edit] | None:
        """Make the option's value `text`: at the value word when it is literal, at the
        assignment it came from when that assignment feeds nothing else."""

    def add_flag(self, text: str) -> list[Edit] | None:
        """Append `text` (one or more options) to the entry point's arguments."""

    def insert_export(self, name: str, value: str) -> list[Edit] | None:
        """Add `export NAME=value` where it reaches the launch (after the last export)."""

    def replace_item(self, obj: dict[str, Any], text: str) -> list[Edit] | None:
        """Replace the words of one element of a context list (an unknown flag's spelling)."""
