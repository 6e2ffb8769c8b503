"""The extractor on small Megatron-like trees written for these tests: exact catalogue output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from synthetic_tree import FILES, expected_flags, write_tree, write_wheel

from megalint.megatron.extract import ExtractError, extract_catalogue


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return write_tree(tmp_path_factory.mktemp("mlm"))


def test_directory_tree_gives_exact_catalogue(tree):
    cat = extract_catalogue(tree, version_label="synthetic")
    got = cat.to_json()
    assert got["version"] == "synthetic"
    assert str(tree) in got["generated_from"]
    assert got["flags"] == expected_flags()
    assert cat.warnings == []


def test_flag_never_reached_from_parse_args_is_absent(tree):
    options = extract_catalogue(tree).by_option()
    assert "--never" not in options


def test_conditional_flag_is_kept_with_its_condition(tree):
    flag = extract_catalogue(tree).by_option()["--ext-config"]
    assert flag.condition == "HAVE_EXT"
    assert extract_catalogue(tree).by_option()["--fp16"].condition is None


def test_origin_names_the_dataclass_that_declares_an_inherited_field(tree):
    options = extract_catalogue(tree).by_option()
    assert (
        options["--tensor-parallel-size"].origin == "dataclass ModelConfig.tensor_parallel_size (from ParallelConfig)"
    )
    assert options["--num-layers"].origin == "dataclass ModelConfig.num_layers"
    assert options["--fp16"].origin == "arguments.py:_add_training_args"


def test_wheel_is_read_in_memory_and_matches_directory(tmp_path, tree):
    wheel = write_wheel(tmp_path / "megatron_core-9.9.9-py3-none-any.whl")
    cat = extract_catalogue(wheel)
    assert cat.version == "9.9.9"
    assert cat.generated_from.startswith("megatron_core-9.9.9-py3-none-any.whl (wheel;")
    assert cat.to_json()["flags"] == extract_catalogue(tree).to_json()["flags"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["megatron_core-9.9.9-py3-none-any.whl"]


def test_megatron_directory_itself_is_accepted(tree):
    assert extract_catalogue(tree / "megatron").to_json()["flags"] == expected_flags()


def test_version_label_defaults_to_package_info(tmp_path):
    files = dict(FILES)
    files["megatron/core/package_info.py"] = "MAJOR = 0\nMINOR = 19\nPATCH = 0\nPRE_RELEASE = 'rc1'\n"
    assert extract_catalogue(write_tree(tmp_path, files)).version == "0.19.0rc1"


def test_json_round_trips(tree):
    data = extract_catalogue(tree).to_json()
    assert json.loads(json.dumps(data)) == data


def _mini(tmp_path: Path, arguments: str, extra: dict[str, str] | None = None) -> Path:
    files = {
        "megatron/__init__.py": "",
        "megatron/training/__init__.py": "",
        "megatron/training/arguments.py": arguments,
        "megatron/training/argument_utils.py": "class ArgumentGroupFactory:\n    pass\n",
    }
    files.update(extra or {})
    return write_tree(tmp_path, files)


def test_union_without_argparse_meta_is_reported_not_guessed(tmp_path):
    root = _mini(
        tmp_path,
        """
from dataclasses import dataclass
from typing import Union
from megatron.training.argument_utils import ArgumentGroupFactory

@dataclass
class C:
    ok: int = 1
    both: Union[int, str] = 0

def parse_args():
    ArgumentGroupFactory(C).build_group(None, "c")
""",
    )
    cat = extract_catalogue(root)
    assert [f.option_strings for f in cat.flags] == [["--ok"]]
    assert len(cat.warnings) == 1 and "C.both" in cat.warnings[0] and "Unions not supported" in cat.warnings[0]


def test_legacy_parse_args_without_add_megatron_arguments(tmp_path):
    root = _mini(
        tmp_path,
        """
import argparse

def parse_args(extra_args_provider=None, ignore_unknown_args=False):
    parser = argparse.ArgumentParser()
    parser = _add_a(parser)
    return parser.parse_args()

def _add_a(parser):
    group = parser.add_argument_group(title='a')
    group.add_argument('--hidden-dropout', type=float, default=0.1)
    group.add_argument('--eval-iters', type=int, default=100, nargs=argparse.OPTIONAL)
    return parser
""",
    )
    flags = extract_catalogue(root).to_json()["flags"]
    assert flags == [
        {
            "option_strings": ["--hidden-dropout"],
            "dest": "hidden_dropout",
            "action": "store",
            "type": "float",
            "default": 0.1,
            "choices": None,
            "nargs": None,
            "deprecated": None,
        },
        {
            "option_strings": ["--eval-iters"],
            "dest": "eval_iters",
            "action": "store",
            "type": "int",
            "default": 100,
            "choices": None,
            "nargs": "?",
            "deprecated": None,
        },
    ]


def test_non_literal_option_name_is_reported(tmp_path):
    root = _mini(
        tmp_path,
        """
def parse_args():
    name = compute()
    parser.add_argument(name, type=int)
    parser.add_argument('--kept')
""",
    )
    cat = extract_catalogue(root)
    assert [f.option_strings for f in cat.flags] == [["--kept"]]
    assert any("option name not literal" in w for w in cat.warnings)


@pytest.mark.parametrize(
    "setup, message",
    [
        (lambda p: p / "missing", "no such file or directory"),
        (lambda p: p, "no megatron/training/arguments.py"),
        (lambda p: (p / "x.txt").write_text("hello") and p / "x.txt", "neither a directory nor a wheel"),
    ],
)
def test_bad_paths_raise_extract_error(tmp_path, setup, message):
    with pytest.raises(ExtractError, match=message):
        extract_catalogue(setup(tmp_path))


def test_wheel_without_training_package_is_rejected(tmp_path):
    wheel = write_wheel(tmp_path / "megatron_core-0.16.1-py3-none-any.whl", {"megatron/core/__init__.py": ""})
    with pytest.raises(ExtractError, match="older than 0.17 ship only megatron/core"):
        extract_catalogue(wheel)


def test_arguments_without_parser_builder_is_rejected(tmp_path):
    root = _mini(tmp_path, "def helper():\n    pass\n")
    with pytest.raises(ExtractError, match="no parse_args or add_megatron_arguments"):
        extract_catalogue(root)


def test_syntax_error_is_reported(tmp_path):
    root = _mini(tmp_path, "def parse_args(:\n")
    with pytest.raises(ExtractError, match="cannot be parsed"):
        extract_catalogue(root)


def test_argument_functions_in_another_module_are_followed_when_given_the_parser(tmp_path):
    root = _mini(
        tmp_path,
        """
import argparse
from megatron.training import more_args
from megatron.training.utils import print_banner

def parse_args():
    parser = argparse.ArgumentParser()
    print_banner("x")
    parser = more_args.add_more(parser)
    from megatron.training.more_args import add_local
    group = parser.add_argument_group(title="g")
    add_local(group)
    return parser.parse_args()
""",
        {
            "megatron/training/more_args.py": """
def add_more(parser):
    parser.add_argument("--more", type=int, default=3)
    return parser

def add_local(group):
    group.add_argument("--local-flag", action="store_true")
""",
            "megatron/training/utils.py": "def print_banner(text):\n    print(text)\n",
        },
    )
    cat = extract_catalogue(root)
    assert [(f.option_strings, f.origin) for f in cat.flags] == [
        (["--more"], "arguments.py:megatron.training.more_args.add_more"),
        (["--local-flag"], "arguments.py:megatron.training.more_args.add_local"),
    ]
    assert "megatron/training/utils.py" not in cat.parsed_files
