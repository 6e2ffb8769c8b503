"""Values as argparse converts them: an action's `type` (Python's own `int`/`float`, `bool`,
Megatron's converter functions), then its `choices`; and defaults as Megatron would have them."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from megalint import lazy_re
from megalint.errors import ScriptError
from megalint.megatron.bound import ProblemKind
from megalint.megatron.catalogue import DefaultExpr, FlagSpec
from megalint.shell.values import Unknown


class InvalidValue(ScriptError):
    """A value Megatron-LM's parser would reject for its option; binding reports it as a problem."""

    def __init__(self, kind: ProblemKind, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


_PATTERN_OK = lazy_re.compile(r"[^,\d\[\]\(\)\+\*]")


def _eval_pattern(text: str) -> Any:
    """Megatron's layer-pattern strings ("([1]*3+[0])*2"), evaluated without eval().

    Megatron checks the characters (arguments.py:250@HEAD) then calls eval(); the same
    arithmetic on lists and ints is done here on the syntax tree.
    """
    if _PATTERN_OK.search(text):
        raise ValueError(f"Invalid pattern: {text}")

    def ev(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.List):
            return [ev(e) for e in node.elts]
        if isinstance(node, ast.Tuple):
            return tuple(ev(e) for e in node.elts)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
            left, right = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Mult):
                for x in (left, right):
                    if isinstance(x, int) and abs(x) > 100_000:
                        raise ValueError("pattern too large")
            try:
                return left + right if isinstance(node.op, ast.Add) else left * right
            except TypeError as exc:
                raise ValueError(str(exc)) from None
        raise ValueError(f"Invalid pattern: {text}")

    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        raise ValueError(f"Invalid pattern: {text}") from None
    return ev(tree)


def _freq_type(text: str) -> Any:
    # moe_freq_type / la_freq_type / no_rope_freq_type, arguments.py:304-375@HEAD
    if "[" in text:
        return _eval_pattern(text)
    return int(text)


def _tuple_type(text: str) -> Any:
    # tuple_type, arguments.py:377@HEAD
    return tuple(int(i) for i in text.strip("()").split(","))


_CONVERTERS: dict[str, Callable[[str], Any]] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "moe_freq_type": _freq_type,
    "la_freq_type": _freq_type,
    "no_rope_freq_type": _freq_type,
    "tuple_type": _tuple_type,
}


def convert(spec: FlagSpec, option: str, text: str) -> Any:
    """argparse's _get_values for one string: type conversion, then the choices check."""
    t = spec.type
    if t == "enum":
        # Megatron looks the member up by name (argument_utils.py:115@HEAD): a name not in the
        # enum raises KeyError, which argparse does not catch.
        if spec.choices is not None and text not in spec.choices:
            raise InvalidValue(
                ProblemKind.INVALID_CHOICE,
                f"argument {option}: invalid choice: {text!r} (choose from {', '.join(map(repr, spec.choices))})",
            )
        return text
    conv = _CONVERTERS.get(t or "str")
    if conv is None:  # a converter megalint does not reproduce: keep the text
        value: Any = text
    else:
        try:
            value = conv(text)
        except (TypeError, ValueError, ArithmeticError):
            raise InvalidValue(
                ProblemKind.INVALID_TYPE, f"argument {option}: invalid {t or 'str'} value: {text!r}"
            ) from None
    if spec.choices is not None and value not in spec.choices:
        raise InvalidValue(
            ProblemKind.INVALID_CHOICE,
            f"argument {option}: invalid choice: {value!r} (choose from {', '.join(map(repr, spec.choices))})",
        )
    return value


FALSY = {"false", "0", "no", "off", "n", "f", "none"}


def evaluate_default(spec: FlagSpec) -> Any:
    """A default as Megatron would have it, or Unknown with the reason."""
    default = spec.default
    if isinstance(default, DefaultExpr):
        src = default.source.strip()
        if re.fullmatch(r"[\d\s*+\-()]+", src):
            try:
                return _arith(ast.parse(src, mode="eval").body)
            except (ValueError, SyntaxError):
                pass
        m = re.fullmatch(r"[A-Za-z_][\w.]*\.([A-Za-z_]\w*)", src)
        if m and spec.type == "enum" and spec.choices and m.group(1) in spec.choices:
            return m.group(1)
        env = re.search(r"os\.getenv\(\s*['\"](\w+)['\"]", src)
        if env:
            return Unknown(
                f"the default of {spec.name} is read from the environment variable "
                f"{env.group(1)} of each process at run time"
            )
        return Unknown(f"the default of {spec.name} is computed by Megatron ({src})")
    if isinstance(default, str) and spec.type not in (None, "str", "enum"):
        # argparse converts a string default with the action's type.
        try:
            return convert(spec, spec.name, default)
        except InvalidValue:
            return default
    return default


def _arith(node: ast.AST) -> int | float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_arith(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Pow)):
        a, b = _arith(node.left), _arith(node.right)
        if isinstance(node.op, ast.Pow):
            if b > 256:
                raise ValueError("too large")
            power: int | float = a**b  # a float for a negative exponent
            return power
        return a + b if isinstance(node.op, ast.Add) else a - b if isinstance(node.op, ast.Sub) else a * b
    raise ValueError("not arithmetic")
