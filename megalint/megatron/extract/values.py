"""Static evaluation of the expressions found in argparse calls and dataclass fields.

Only what can be known from the source text is evaluated: literals, arithmetic on them, enum members and
enum classes, `range(...)`, `list(Enum)`, comprehensions over an enum, and module-level constants. Anything
else (an environment lookup, a call into torch) raises NotLiteral and the caller records the source text.
"""

from __future__ import annotations

import enum
import importlib
import math
from dataclasses import dataclass

import libcst as cst

from .pymodules import (
    ClassRef,
    ExternalRef,
    FuncRef,
    ModuleIndex,
    ModuleInfo,
    ModuleRef,
    Resolved,
    ValueRef,
    dotted_name,
)

# Standard-library modules whose enums and constants may be introspected in this interpreter (e.g. the
# `signal.Signals` annotation of `--exit-signal`). Nothing from the analysed tree is ever imported.
_INTROSPECTABLE_STDLIB = frozenset({"signal", "enum", "math", "logging"})
_ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag", "enum.ReprEnum"})
_MAX_POW_EXPONENT = 4096


class NotLiteral(Exception):
    """The expression has no value that can be known without running code; never leaves
    megalint.megatron.extract, where the source text is kept instead."""


@dataclass(frozen=True)
class Expr:
    """A value known only as source text."""

    source: str


@dataclass(frozen=True)
class EnumMember:
    """A member of an enum the source defines."""

    enum: str
    name: str
    value: object


@dataclass(frozen=True)
class EnumClass:
    """An enum the source defines, with its members."""

    qualname: str
    members: tuple[EnumMember, ...]

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class _Auto:
    """The value of `enum.auto()`: unique, so never an alias."""

    owner: str
    index: int


@dataclass(frozen=True)
class LocalValue:
    """A function-local `name = expr` binding, evaluated in the scope that made it."""

    scope: Scope
    expr: cst.BaseExpression


class Scope:
    """Name resolution at one point of the source: function-local bindings, then the module, then builtins."""

    def __init__(self, index: ModuleIndex, module: ModuleInfo, local: dict[str, object] | None = None):
        self.index = index
        self.module = module
        self.local: dict[str, object] = dict(local or {})

    def child(self) -> Scope:
        return Scope(self.index, self.module, self.local)

    def code(self, node: cst.CSTNode) -> str:
        return self.module.code(node)

    def resolve_name(self, name: str) -> LocalValue | EnumClass | Resolved | None:
        if name in self.local:
            binding = self.local[name]
            if isinstance(binding, cst.BaseExpression):
                return LocalValue(self, binding)
            if isinstance(binding, (LocalValue, ClassRef, FuncRef, ValueRef, ModuleRef, ExternalRef, EnumClass)):
                return binding
            return self.index.resolve_binding(self.module, name, binding)
        found = self.index.lookup(self.module, name)
        return found if found is not None else ExternalRef(name)

    def resolve(self, node: cst.BaseExpression) -> LocalValue | EnumClass | Resolved | _ClassAttr | None:
        """The binding a Name or dotted Attribute refers to, or None when it is not a plain reference."""
        if isinstance(node, cst.Name):
            return self.resolve_name(node.value)
        if isinstance(node, cst.Attribute):
            base = self.resolve(node.value)
            if base is None:
                return None
            if isinstance(base, (ModuleRef, ExternalRef)):
                return self.index.attribute(base, node.attr.value)
            if isinstance(base, ClassRef):
                return _ClassAttr(base, node.attr.value)
            return None
        return None


@dataclass(frozen=True)
class _ClassAttr:
    """An attribute of a class, as a value refers to it."""

    cls: ClassRef
    attr: str


class Evaluator:
    def __init__(self, index: ModuleIndex):
        self.index = index
        self._enum_cache: dict[int, EnumClass | None] = {}
        self._active: set[int] = set()

    # ---- enums -------------------------------------------------------------------------------------------

    def enum_class(self, ref: object) -> EnumClass | None:
        """The enum a resolved reference denotes, or None if it is not an enum class."""
        if isinstance(ref, EnumClass):
            return ref
        if isinstance(ref, ClassRef):
            key = id(ref.node)
            if key not in self._enum_cache:
                self._enum_cache[key] = None  # breaks cycles in malformed inheritance
                self._enum_cache[key] = self._enum_from_class(ref)
            return self._enum_cache[key]
        if isinstance(ref, ExternalRef):
            obj = _stdlib_object(ref.dotted)
            if isinstance(obj, type) and issubclass(obj, enum.Enum):
                qual = f"{obj.__module__}.{obj.__qualname__}"
                return EnumClass(qual, tuple(EnumMember(qual, m.name, m.value) for m in obj))
        return None

    def _enum_from_class(self, ref: ClassRef) -> EnumClass | None:
        scope = Scope(self.index, ref.module)
        is_enum = False
        for base in ref.node.bases:
            resolved = scope.resolve(base.value)
            if isinstance(resolved, ExternalRef) and resolved.dotted in _ENUM_BASES:
                is_enum = True
            elif isinstance(resolved, (ClassRef, ExternalRef)) and self.enum_class(resolved) is not None:
                is_enum = True
        if not is_enum:
            return None
        members: list[EnumMember] = []
        seen_values: list[object] = []
        body = ref.node.body.body if isinstance(ref.node.body, cst.IndentedBlock) else ()
        for stmt in body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not isinstance(small, cst.Assign) or len(small.targets) != 1:
                    continue
                target = small.targets[0].target
                if not isinstance(target, cst.Name):
                    continue
                name = target.value
                if name.startswith("_") and name.endswith("_"):
                    continue
                value = self._member_value(small.value, scope, ref.qualname, len(members))
                if not isinstance(value, (_Auto, Expr)) and any(_same_value(value, v) for v in seen_values):
                    continue  # an alias: list(Enum) skips it
                seen_values.append(value)
                members.append(EnumMember(ref.qualname, name, value))
        return EnumClass(ref.qualname, tuple(members))

    def _member_value(self, node: cst.BaseExpression, scope: Scope, owner: str, index: int) -> object:
        if isinstance(node, cst.Call) and (dotted_name(node.func) or "").split(".")[-1] == "auto":
            return _Auto(owner, index)
        try:
            return self.evaluate(node, scope)
        except NotLiteral:
            return Expr(scope.code(node))

    # ---- expressions -------------------------------------------------------------------------------------

    def evaluate_or_expr(self, node: cst.BaseExpression, scope: Scope) -> object:
        try:
            return self.evaluate(node, scope)
        except NotLiteral:
            return Expr(scope.code(node))

    def evaluate(self, node: cst.BaseExpression, scope: Scope) -> object:
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            value = _literal(node)
            if value is None:
                raise NotLiteral
            return value
        if isinstance(node, (cst.Integer, cst.Float)):
            number = _literal(node)
            if isinstance(number, float) and not math.isfinite(number):
                raise NotLiteral
            return number
        if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.value]
        if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
            items = []
            for el in node.elements:
                if isinstance(el, cst.StarredElement):
                    items.extend(self._iterate(self.evaluate(el.value, scope)))
                else:
                    items.append(self.evaluate(el.value, scope))
            return tuple(items) if isinstance(node, cst.Tuple) else items
        if isinstance(node, cst.Dict):
            out = {}
            for entry in node.elements:
                if not isinstance(entry, cst.DictElement):
                    raise NotLiteral
                key = self.evaluate(entry.key, scope)
                try:
                    out[key] = self.evaluate(entry.value, scope)
                except NotLiteral:
                    out[key] = Expr(scope.code(entry.value))
            return out
        if isinstance(node, cst.UnaryOperation):
            operand = self.evaluate(node.expression, scope)
            return _unary(node.operator, operand)
        if isinstance(node, cst.BinaryOperation):
            return _binary(node.operator, self.evaluate(node.left, scope), self.evaluate(node.right, scope))
        if isinstance(node, (cst.Name, cst.Attribute)):
            return self._reference(node, scope)
        if isinstance(node, cst.Subscript):
            return self._subscript(node, scope)
        if isinstance(node, cst.Call):
            return self._call(node, scope)
        if isinstance(node, cst.ListComp):
            return self._comprehension(node, scope)
        raise NotLiteral

    def _reference(self, node: cst.BaseExpression, scope: Scope) -> object:
        ref = scope.resolve(node)
        if isinstance(ref, LocalValue):
            return self._guarded(ref.expr, ref.scope)
        if isinstance(ref, ValueRef):
            return self._guarded(ref.expr, Scope(self.index, ref.module))
        if isinstance(ref, _ClassAttr):
            enum_cls = self.enum_class(ref.cls)
            if enum_cls is not None:
                for m in enum_cls.members:
                    if m.name == ref.attr:
                        return m
            raise NotLiteral
        if isinstance(ref, (ClassRef, ExternalRef)):
            enum_cls = self.enum_class(ref)
            if enum_cls is not None:
                return enum_cls
            if isinstance(ref, ExternalRef):
                return _stdlib_value(ref.dotted)
        raise NotLiteral

    def _guarded(self, expr: cst.BaseExpression, scope: Scope) -> object:
        key = id(expr)
        if key in self._active:
            raise NotLiteral
        self._active.add(key)
        try:
            return self.evaluate(expr, scope)
        finally:
            self._active.discard(key)

    def _subscript(self, node: cst.Subscript, scope: Scope) -> object:
        base = self.evaluate(node.value, scope)
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            raise NotLiteral
        key = self.evaluate(node.slice[0].slice.value, scope)
        if isinstance(base, EnumClass) and isinstance(key, str):
            for m in base.members:
                if m.name == key:
                    return m
            raise NotLiteral
        try:
            return base[key]  # type: ignore[index]
        except (TypeError, KeyError, IndexError):
            raise NotLiteral from None

    def _call(self, node: cst.Call, scope: Scope) -> object:
        func = dotted_name(node.func)
        ref = scope.resolve(node.func) if func else None
        builtin = ref.dotted if isinstance(ref, ExternalRef) and "." not in ref.dotted else None
        if builtin is None or any(a.keyword is not None or a.star for a in node.args):
            raise NotLiteral
        args = [self.evaluate(a.value, scope) for a in node.args]
        ints = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
        if builtin == "range" and len(ints) == len(args) and 1 <= len(args) <= 3:
            r = range(*ints)
            if len(r) > 100_000:
                raise NotLiteral
            return list(r)
        if builtin in ("list", "tuple", "set", "sorted") and len(args) == 1:
            items = list(self._iterate(args[0]))
            if builtin == "sorted":
                try:
                    return sorted(items)  # type: ignore[type-var]  # mixed types: TypeError below
                except TypeError:
                    raise NotLiteral from None
            return tuple(items) if builtin == "tuple" else items
        if builtin in ("int", "float", "str", "bool") and len(args) <= 1:
            if any(isinstance(a, (Expr, EnumMember, EnumClass)) for a in args):
                raise NotLiteral
            try:
                value = {"int": int, "float": float, "str": str, "bool": bool}[builtin](*args)
            except (TypeError, ValueError):
                raise NotLiteral from None
            if isinstance(value, float) and not math.isfinite(value):
                raise NotLiteral
            return value
        raise NotLiteral

    def _iterate(self, value: object) -> list[object]:
        if isinstance(value, EnumClass):
            return list(value.members)
        if isinstance(value, (list, tuple, str)):
            return list(value)
        if isinstance(value, dict):
            return list(value)
        raise NotLiteral

    def _comprehension(self, node: cst.ListComp, scope: Scope) -> object:
        comp = node.for_in
        if comp.inner_for_in is not None or comp.ifs or not isinstance(comp.target, cst.Name):
            raise NotLiteral
        items = self._iterate(self.evaluate(comp.iter, scope))
        var = comp.target.value
        out = []
        for item in items:
            out.append(self._element(node.elt, var, item, scope))
        return out

    def _element(self, elt: cst.BaseExpression, var: str, item: object, scope: Scope) -> object:
        if isinstance(elt, cst.Name) and elt.value == var:
            return item
        if isinstance(elt, cst.Attribute) and isinstance(elt.value, cst.Name) and elt.value.value == var:
            if isinstance(item, EnumMember) and elt.attr.value in ("name", "value"):
                value = item.name if elt.attr.value == "name" else item.value
                if isinstance(value, (Expr, _Auto)):
                    raise NotLiteral
                return value
        raise NotLiteral


def _same_value(a: object, b: object) -> bool:
    if isinstance(b, (_Auto, Expr)):
        return False
    try:
        return type(a) is type(b) and a == b
    except Exception:
        return False


def _unary(op: cst.BaseUnaryOp, v: object) -> object:
    if isinstance(op, cst.Not):
        if isinstance(v, (Expr, EnumMember, EnumClass)):
            raise NotLiteral
        return not v
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        raise NotLiteral
    if isinstance(op, cst.Minus):
        return -v
    if isinstance(op, cst.Plus):
        return +v
    if isinstance(op, cst.BitInvert) and isinstance(v, int):
        return ~v
    raise NotLiteral


def _binary(op: cst.BaseBinaryOp, a: object, b: object) -> object:
    numbers = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b))
    try:
        if isinstance(op, cst.Add):
            if numbers or (type(a) is type(b) and isinstance(a, (str, list, tuple))):
                return a + b  # type: ignore[operator]
        elif isinstance(op, cst.Multiply):
            if numbers:
                return a * b  # type: ignore[operator]
            if isinstance(a, (str, list)) and isinstance(b, int) and not isinstance(b, bool) and b < 10_000:
                return a * b
        elif numbers:
            if isinstance(op, cst.Subtract):
                return a - b  # type: ignore[operator]
            if isinstance(op, cst.Divide):
                return a / b  # type: ignore[operator]
            if isinstance(op, cst.FloorDivide):
                return a // b  # type: ignore[operator]
            if isinstance(op, cst.Modulo):
                return a % b  # type: ignore[operator]
            if isinstance(op, cst.Power):
                if isinstance(b, (int, float)) and abs(b) > _MAX_POW_EXPONENT:
                    raise NotLiteral
                return a**b  # type: ignore[operator]
    except (ZeroDivisionError, OverflowError):
        raise NotLiteral from None
    raise NotLiteral


def _stdlib_object(dotted: str) -> object:
    parts = dotted.split(".")
    if len(parts) < 2 or parts[0] not in _INTROSPECTABLE_STDLIB:
        return None
    try:
        obj: object = importlib.import_module(parts[0])
        for p in parts[1:]:
            obj = getattr(obj, p)
    except (ImportError, AttributeError):
        return None
    return obj


def _stdlib_value(dotted: str) -> object:
    obj = _stdlib_object(dotted)
    if isinstance(obj, enum.Enum):
        cls = type(obj)
        return EnumMember(f"{cls.__module__}.{cls.__qualname__}", obj.name, obj.value)
    if isinstance(obj, (bool, int, str)) or (isinstance(obj, float) and math.isfinite(obj)):
        return obj
    raise NotLiteral


def _literal(node: cst.SimpleString | cst.ConcatenatedString | cst.Integer | cst.Float) -> object:
    """A literal's value; an int too long to convert (past Python's 4,300 digits) is no literal."""
    try:
        return node.evaluated_value
    except (ValueError, SyntaxError):
        raise NotLiteral from None
