"""Reading the `type=` and `action=` keywords, which name callables rather than hold values."""

from __future__ import annotations

import libcst as cst

from .model import ACTION_CLASSES
from .pymodules import ClassRef, ExternalRef, FuncRef, dotted_name
from .values import Evaluator, NotLiteral, Scope


def type_name(node: cst.BaseExpression, scope: Scope) -> str:
    """The `__name__` argparse would see for a `type=` callable: int, str, a converter's name, `<lambda>`."""
    if isinstance(node, cst.Lambda):
        return "<lambda>"
    if isinstance(node, (cst.Name, cst.Attribute)):
        ref = scope.resolve(node)
        if isinstance(ref, (FuncRef, ClassRef)):
            return ref.name
        if isinstance(ref, ExternalRef):
            return ref.dotted.rsplit(".", 1)[-1]
        return (dotted_name(node) or scope.code(node)).rsplit(".", 1)[-1]
    return scope.code(node)


def action_name(node: cst.BaseExpression, scope: Scope, evaluator: Evaluator) -> str:
    """`action=` as argparse's registry name (`store_true`), or `boolean_optional` for BooleanOptionalAction."""
    if isinstance(node, (cst.Name, cst.Attribute)):
        ref = scope.resolve(node)
        last = None
        if isinstance(ref, ExternalRef):
            last = ref.dotted.rsplit(".", 1)[-1]
        elif isinstance(ref, ClassRef):
            return ref.name
        if last in ACTION_CLASSES:
            return ACTION_CLASSES[last]
    try:
        value = evaluator.evaluate(node, scope)
    except NotLiteral:
        return scope.code(node)
    return value if isinstance(value, str) else scope.code(node)


def nargs_value(node: cst.BaseExpression, scope: Scope, evaluator: Evaluator) -> object:
    from .model import NARGS_CONSTANTS

    if isinstance(node, cst.Attribute):
        ref = scope.resolve(node)
        if isinstance(ref, ExternalRef) and ref.dotted.startswith("argparse."):
            name = ref.dotted.rsplit(".", 1)[-1]
            if name in NARGS_CONSTANTS:
                return NARGS_CONSTANTS[name]
    return evaluator.evaluate_or_expr(node, scope)
