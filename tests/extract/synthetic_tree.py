"""A small Megatron-like source tree, written for these tests, with one instance of each case the extractor handles.

Layout mirrors Megatron-LM's: megatron/training/arguments.py builds the parser, config dataclasses live in
megatron/core and megatron/training, an enum module, a package __init__ that re-exports a dataclass.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

FILES: dict[str, str] = {
    "megatron/__init__.py": "",
    "megatron/core/__init__.py": "",
    "megatron/core/enums.py": """
import enum


class Backend(enum.Enum):
    flash = 1
    fused = 2
    auto = 3
    automatic = 3  # an alias: not a separate member


class Kind(str, enum.Enum):
    dense = "dense"
    moe = enum.auto()
""",
    "megatron/core/parallel_config.py": '''
from dataclasses import dataclass


@dataclass
class ParallelConfig:
    tensor_parallel_size: int = 1
    """Tensor parallel size."""

    sequence_parallel: bool = False

    overlap: bool = True

    dtype_name: str = "fp32"
''',
    "megatron/core/model/__init__.py": "from .config import ModelConfig\n",
    "megatron/core/model/config.py": """
import os
import signal
from dataclasses import dataclass, field
from typing import Callable, ClassVar, List, Literal, Optional, Union

from ..enums import Backend, Kind
from ..parallel_config import ParallelConfig


@dataclass
class ModelConfig(ParallelConfig):
    num_layers: int = 0
    hidden_size: int | None = None
    norm: Literal['LayerNorm', 'RMSNorm'] = 'LayerNorm'
    level: Optional[Literal[0, 1, 2]] = None
    modules: list[str] = field(default_factory=lambda: ['core'])
    skip: List[int] = field(default_factory=list)
    backend: Backend = Backend.auto
    kind: Optional[Kind] = None
    overlap: bool = False
    fused: Optional[bool] = None
    init_weights: bool = field(default=True, metadata={"argparse_meta": {"arg_names": ["--no-init"]}})
    epsilon: float = field(
        default=1e-5, metadata={"argparse_meta": {"arg_names": ["--eps", "--norm-eps"], "dest": "norm_eps"}}
    )
    local_rank: int = field(default_factory=lambda: int(os.getenv("LOCAL_RANK", "0")))
    ramp: list[int] | None = field(default=None, metadata={"argparse_meta": {"nargs": 3}})
    pattern: Optional[Union[int, List[int]]] = field(default=None, metadata={"argparse_meta": {"type": str}})
    scope: Optional[Backend] = field(
        default=None, metadata={"argparse_meta": {"type": str, "choices": [b.name for b in Backend]}}
    )
    activation: Callable = None
    internal: int = 0
    derived: int = field(init=False, default=0)
    counter: ClassVar[int] = 0
    big: int = 2**20
    neg: float = -0.5
    zero_flag: bool = 0
    sig: signal.Signals = signal.SIGTERM
    broken: Union[int, str] = 0
""",
    "megatron/training/__init__.py": "",
    "megatron/training/argument_utils.py": """
class ArgumentGroupFactory:
    def __init__(self, src_cfg_class, exclude=None):
        self.src_cfg_class = src_cfg_class
        self.exclude = set(exclude or ())

    def build_group(self, parser, title=None):
        return parser.add_argument_group(title=title)
""",
    "megatron/training/config.py": """
from dataclasses import dataclass


@dataclass(kw_only=True)
class LoggerConfig:
    log_interval: int = 100
    log_dir: str | None = None
    quiet: bool = False
""",
    "megatron/training/arguments.py": """
import argparse
import os

from megatron.core.enums import Backend
from megatron.core.model import ModelConfig
from megatron.training.argument_utils import ArgumentGroupFactory

MAX_SCALE = 2 ** 32


def add_megatron_arguments(parser):
    parser = _add_model_args(parser)
    parser = _add_training_args(parser)
    parser = _add_logging_args(parser)
    parser = _add_optional_args(parser)
    return parser


def parse_args(extra_args_provider=None):
    parser = argparse.ArgumentParser(allow_abbrev=False)
    parser = add_megatron_arguments(parser)
    if extra_args_provider is not None:
        parser = extra_args_provider(parser)
    return parser.parse_args()


def tuple_type(x):
    return tuple(int(v) for v in x.split(","))


def _never_called(parser):
    parser.add_argument("--never")
    return parser


def _add_model_args(parser):
    exclude = ["activation", "broken"]
    exclude += ["internal"]
    factory = ArgumentGroupFactory(ModelConfig, exclude=exclude)
    factory.build_group(parser, "model")
    group = parser.add_argument_group(title="extra")
    group.add_argument("--window-size", type=tuple_type, default=None)
    return parser


def _add_training_args(parser):
    group = parser.add_argument_group(title="training")
    group.add_argument("--micro-batch-size", "--mbs", type=int, default=None, help="a" "b")
    group.add_argument("-s", "--seq-length", type=int)
    group.add_argument("--initial-loss-scale", type=float, default=2**32)
    group.add_argument("--max-scale", type=float, default=MAX_SCALE)
    group.add_argument("--min-lr", type=float, default=-1.5)
    group.add_argument("--name", default="mega" "tron")
    group.add_argument("--no-bias", action="store_false", dest="add_bias")
    group.add_argument("--fp16", action="store_true")
    group.add_argument("--timing-level", type=int, default=0, choices=range(0, 3))
    group.add_argument("--attn", type=lambda x: Backend[x], default=Backend.auto, choices=list(Backend))
    group.add_argument("--strict", default="flash", choices=[e.name for e in Backend])
    group.add_argument("--world", type=int, default=int(os.getenv("WORLD_SIZE", "1")))
    group.add_argument("--packing", action=argparse.BooleanOptionalAction, type=bool, default=False)
    group.add_argument("--data-path", nargs="*", default=None)
    group.add_argument("--split", type=str, default=["969", "30", "1"])
    return parser


def _add_logging_args(parser):
    from megatron.training.config import LoggerConfig

    ArgumentGroupFactory(LoggerConfig, exclude=["quiet"]).build_group(parser, "logging")
    return parser


def _add_optional_args(parser):
    try:
        from megatron.core.extension import HAVE_EXT
    except ImportError:
        HAVE_EXT = False
    if HAVE_EXT:
        group = parser.add_argument_group(title="ext")
        group.add_argument("--ext-config", type=str)
    return parser
""",
}


def _flag(opts, dest, action="store", type=None, default=None, choices=None, nargs=None):
    return {
        "option_strings": opts,
        "dest": dest,
        "action": action,
        "type": type,
        "default": default,
        "choices": choices,
        "nargs": nargs,
        "deprecated": None,
    }


SIGNALS = None  # filled from the interpreter's signal module by the test: the choices of signal.Signals

# What argparse would hold after parse_args() built the parser of FILES, in order.
EXPECTED_FLAGS = [
    # ModelConfig: ParallelConfig's fields first; `overlap` is redefined by the child and keeps its place.
    _flag(["--tensor-parallel-size"], "tensor_parallel_size", type="int", default=1),
    _flag(["--sequence-parallel"], "sequence_parallel", action="store_true", default=False),
    _flag(["--overlap"], "overlap", action="store_true", default=False),
    _flag(["--dtype-name"], "dtype_name", type="str", default="fp32"),
    _flag(["--num-layers"], "num_layers", type="int", default=0),
    _flag(["--hidden-size"], "hidden_size", type="int"),
    _flag(["--norm"], "norm", type="str", default="LayerNorm", choices=["LayerNorm", "RMSNorm"]),
    _flag(["--level"], "level", type="int", choices=[0, 1, 2]),
    _flag(["--modules"], "modules", type="str", default=["core"], nargs="+"),
    _flag(["--skip"], "skip", type="int", default=[], nargs="+"),
    _flag(["--backend"], "backend", type="enum_type_handler", default="auto", choices=["flash", "fused", "auto"]),
    _flag(["--kind"], "kind", type="enum_type_handler", choices=["dense", "moe"]),
    _flag(["--no-fused", "--disable-fused"], "fused", action="store_false"),
    _flag(["--no-init"], "init_weights", action="store_false", default=True),
    _flag(["--eps", "--norm-eps"], "norm_eps", type="float", default=1e-05),
    _flag(["--local-rank"], "local_rank", type="int", default={"__expr__": 'int(os.getenv("LOCAL_RANK", "0"))'}),
    _flag(["--ramp"], "ramp", type="int", nargs=3),
    _flag(["--pattern"], "pattern", type="str"),
    _flag(["--scope"], "scope", type="str", choices=["flash", "fused", "auto"]),
    _flag(["--big"], "big", type="int", default=1048576),
    _flag(["--neg"], "neg", type="float", default=-0.5),
    _flag(["--zero-flag"], "zero_flag", action="store_true", default=0),
    "SIG",  # --sig, built in the test from the signal module
    # literal add_argument calls
    _flag(["--window-size"], "window_size", type="tuple_type"),
    _flag(["--micro-batch-size", "--mbs"], "micro_batch_size", type="int"),
    _flag(["-s", "--seq-length"], "seq_length", type="int"),
    _flag(["--initial-loss-scale"], "initial_loss_scale", type="float", default=4294967296),
    _flag(["--max-scale"], "max_scale", type="float", default=4294967296),
    _flag(["--min-lr"], "min_lr", type="float", default=-1.5),
    _flag(["--name"], "name", default="megatron"),
    _flag(["--no-bias"], "add_bias", action="store_false", default=True),
    _flag(["--fp16"], "fp16", action="store_true", default=False),
    _flag(["--timing-level"], "timing_level", type="int", default=0, choices=[0, 1, 2]),
    _flag(["--attn"], "attn", type="<lambda>", default="auto", choices=["flash", "fused", "auto"]),
    _flag(["--strict"], "strict", default="flash", choices=["flash", "fused", "auto"]),
    _flag(["--world"], "world", type="int", default={"__expr__": 'int(os.getenv("WORLD_SIZE", "1"))'}),
    _flag(["--packing", "--no-packing"], "packing", action="boolean_optional", type="bool", default=False),
    _flag(["--data-path"], "data_path", nargs="*"),
    _flag(["--split"], "split", type="str", default=["969", "30", "1"]),
    # LoggerConfig through a chained factory created after a function-local import
    _flag(["--log-interval"], "log_interval", type="int", default=100),
    _flag(["--log-dir"], "log_dir", type="str"),
    # under `if HAVE_EXT:`
    _flag(["--ext-config"], "ext_config", type="str"),
]


def expected_flags() -> list[dict]:
    import signal

    sig = _flag(["--sig"], "sig", type="enum_type_handler", default="SIGTERM", choices=[s.name for s in signal.Signals])
    return [sig if f == "SIG" else f for f in EXPECTED_FLAGS]


def write_tree(root: Path, files: dict[str, str] = FILES) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text.lstrip("\n"), encoding="utf-8")
    return root


def write_wheel(path: Path, files: dict[str, str] = FILES) -> Path:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for rel, text in files.items():
            zf.writestr(rel, text.lstrip("\n"))
        zf.writestr("megatron_core-9.9.9.dist-info/METADATA", "Name: megatron-core\nVersion: 9.9.9\n")
    path.write_bytes(buf.getvalue())
    return path
