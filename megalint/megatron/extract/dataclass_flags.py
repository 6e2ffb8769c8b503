"""Flags generated from a config dataclass, following megatron/training/argument_utils.py (ArgumentGroupFactory).

The rules, as ArgumentGroupFactory applies them since core_v0.16.0:
- one flag per dataclass field (bases first, a redefined field keeps its base's position), skipping fields
  in `exclude` and fields with init=False;
- `--<name with - for _>`, dest = field name, default = `default` or `default_factory()`;
- Optional[T] / T | None -> T; list[T] -> nargs '+'; Literal[...] -> choices and the literal's type;
  an Enum -> a name-lookup converter with the members as choices; other unions, tuples, callables fail;
- bool: default == False -> store_true, otherwise store_false named --no-<name> and --disable-<name>;
- `field(metadata={"argparse_meta": {...}})` overrides any of the above, including `arg_names`.
"""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from megalint.errors import InputError

from .bounds import SourceTooComplex, check_source
from .kwargs import action_name, nargs_value, type_name
from .model import Flag, build_flag
from .pymodules import ClassRef, ExternalRef, ValueRef, dotted_name
from .values import EnumClass, Evaluator, Expr, LocalValue, NotLiteral, Scope

ENUM_CONVERTER = "enum_type_handler"  # the name of the converter ArgumentGroupFactory builds for enums

_TYPING_PREFIXES = ("typing.", "typing_extensions.", "collections.abc.")
# Bare typing names whose typing.get_origin() is not None, so ArgumentGroupFactory rejects them.
_BARE_GENERICS = {
    "List": "list",
    "Dict": "dict",
    "Tuple": "tuple",
    "Set": "set",
    "FrozenSet": "frozenset",
    "Callable": "Callable",
    "ContextManager": "ContextManager",
    "Sequence": "Sequence",
    "Iterable": "Iterable",
    "Mapping": "Mapping",
    "Type": "type",
}


class TypeInferenceError(InputError):
    """A class or annotation of the Megatron-LM source that the extractor cannot turn into argparse
    types; the extraction goes on without what it describes."""


# ---- annotation terms (what typing.get_origin/get_args would report) ------------------------------------


@dataclass(frozen=True)
class TNone:
    """The type `None` in a field's annotation."""

    pass


@dataclass(frozen=True)
class TPlain:
    """A named type in a field's annotation (`int`, an enum)."""

    name: str
    enum: EnumClass | None = None


@dataclass(frozen=True)
class TUnion:
    """A union in a field's annotation (`int | None`)."""

    args: tuple[object, ...]


@dataclass(frozen=True)
class TLiteral:
    """A `Literal[...]` in a field's annotation."""

    values: tuple[object, ...]


@dataclass(frozen=True)
class TGeneric:
    """A generic in a field's annotation (`list[int]`)."""

    origin: str
    args: tuple[object, ...]


def _union(parts: list[object]) -> object:
    flat: list[object] = []
    for p in parts:
        for q in p.args if isinstance(p, TUnion) else (p,):
            if q not in flat:
                flat.append(q)
    return flat[0] if len(flat) == 1 else TUnion(tuple(flat))


def _typing_name(ref: object) -> str | None:
    if isinstance(ref, ExternalRef):
        for prefix in _TYPING_PREFIXES:
            if ref.dotted.startswith(prefix):
                return ref.dotted[len(prefix) :]
        if "." not in ref.dotted:
            return ref.dotted
    return None


class AnnotationReader:
    def __init__(self, evaluator: Evaluator):
        self.evaluator = evaluator

    def term(self, node: cst.BaseExpression, scope: Scope) -> object:
        if isinstance(node, cst.Name) and node.value == "None":
            return TNone()
        if isinstance(node, cst.SimpleString):
            text = node.evaluated_value
            if isinstance(text, str):
                try:
                    check_source(text)
                    annotation = cst.parse_expression(text)
                except (SourceTooComplex, cst.ParserSyntaxError) as exc:
                    raise TypeInferenceError(f"unreadable annotation {text[:80]!r}: {exc}") from None
                return self.term(annotation, scope)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.BitOr):
            return _union([self.term(node.left, scope), self.term(node.right, scope)])
        if isinstance(node, cst.Subscript):
            return self._subscript(node, scope)
        if isinstance(node, (cst.Name, cst.Attribute)):
            ref = scope.resolve(node)
            enum_cls = self.evaluator.enum_class(ref) if isinstance(ref, (ClassRef, ExternalRef)) else None
            if enum_cls is not None:
                return TPlain(enum_cls.name, enum_cls)
            if isinstance(ref, ClassRef):
                return TPlain(ref.name)
            tname = _typing_name(ref)
            if tname in _BARE_GENERICS:
                return TGeneric(_BARE_GENERICS[tname], ())
            if isinstance(ref, ExternalRef):
                return TPlain(ref.dotted.rsplit(".", 1)[-1])
        raise TypeInferenceError(f"unreadable annotation {scope.code(node)}")

    def _subscript(self, node: cst.Subscript, scope: Scope) -> object:
        origin = _typing_name(scope.resolve(node.value)) if isinstance(node.value, (cst.Name, cst.Attribute)) else None
        elements = [el.slice.value for el in node.slice if isinstance(el.slice, cst.Index)]
        if len(elements) == 1 and isinstance(elements[0], cst.Tuple) and origin != "Literal":
            elements = [e.value for e in elements[0].elements]
        if origin == "Literal":
            values: list[object] = []
            items = elements
            if len(items) == 1 and isinstance(items[0], cst.Tuple):
                items = [e.value for e in items[0].elements]
            for item in items:
                try:
                    values.append(self.evaluator.evaluate(item, scope))
                except NotLiteral:
                    raise TypeInferenceError(f"unreadable Literal value {scope.code(item)}") from None
            deduped: list[object] = []
            for v in values:
                if not any(type(v) is type(d) and v == d for d in deduped):
                    deduped.append(v)
            return TLiteral(tuple(deduped))
        args = [self.term(e, scope) for e in elements]
        if origin == "Optional":
            return _union([args[0], TNone()])
        if origin == "Union":
            return _union(args)
        if origin in ("list", "List"):
            return TGeneric("list", tuple(args))
        return TGeneric(origin or scope.code(node.value), tuple(args))


def extract_type(term: object) -> dict[str, object]:
    """ArgumentGroupFactory._extract_type on an annotation term."""
    if isinstance(term, TPlain) and term.enum is not None:
        return {"type": ENUM_CONVERTER, "choices": term.enum}
    if isinstance(term, TPlain):
        return {"type": term.name}
    if isinstance(term, TNone):
        return {"type": "NoneType"}
    if isinstance(term, TUnion):
        if term.args[1] == TNone():
            return extract_type(term.args[0])
        raise TypeInferenceError("Unions not supported by argparse")
    if isinstance(term, TGeneric) and term.origin == "list":
        if len(term.args) == 1:
            kwargs = extract_type(term.args[0])
            kwargs["nargs"] = "+"
            return kwargs
        raise TypeInferenceError("Multi-type lists not supported by argparse")
    if isinstance(term, TLiteral):
        kinds = {type(v) for v in term.values}
        if len(kinds) != 1:
            raise TypeInferenceError("Literal values of different types")
        return {"type": type(term.values[0]).__name__, "choices": list(term.values)}
    raise TypeInferenceError(f"Unsupported type: {term}")


# ---- dataclass fields ---------------------------------------------------------------------------------------


@dataclass
class FieldInfo:
    """A dataclass field that becomes a flag, with its annotation and default."""

    name: str
    owner: ClassRef
    annotation: cst.BaseExpression
    default: cst.BaseExpression | None
    default_factory: cst.BaseExpression | None
    metadata: cst.BaseExpression | None
    init: bool
    has_default: bool


def _is_dataclass(cls: ClassRef) -> bool:
    for dec in cls.node.decorators:
        expr = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
        name = dotted_name(expr) or ""
        if name.rsplit(".", 1)[-1] == "dataclass":
            return True
    return False


class DataclassReader:
    def __init__(self, evaluator: Evaluator, warnings: list[str]):
        self.evaluator = evaluator
        self.index = evaluator.index
        self.annotations = AnnotationReader(evaluator)
        self.warnings = warnings

    def bases(self, cls: ClassRef) -> list[ClassRef]:
        scope = Scope(self.index, cls.module)
        out = []
        for arg in cls.node.bases:
            if arg.keyword is not None:
                continue
            ref = scope.resolve(arg.value)
            if isinstance(ref, ClassRef):
                out.append(ref)
        return out

    def mro(self, cls: ClassRef, _stack: tuple[int, ...] = ()) -> list[ClassRef]:
        if id(cls.node) in _stack:
            raise TypeInferenceError(f"cyclic inheritance at {cls.qualname}")
        stack = _stack + (id(cls.node),)
        seqs = [self.mro(b, stack) for b in self.bases(cls)] + [self.bases(cls)]
        result = [cls]
        seqs = [list(s) for s in seqs if s]
        while seqs:
            for seq in seqs:
                head = seq[0]
                if not any(any(id(head.node) == id(x.node) for x in s[1:]) for s in seqs):
                    break
            else:
                raise TypeInferenceError(f"inconsistent MRO for {cls.qualname}")
            result.append(head)
            seqs = [[x for x in s if id(x.node) != id(head.node)] for s in seqs]
            seqs = [s for s in seqs if s]
        return result

    def own_fields(self, cls: ClassRef) -> list[FieldInfo]:
        scope = Scope(self.index, cls.module)
        out = []
        body = cls.node.body.body if isinstance(cls.node.body, cst.IndentedBlock) else ()
        for stmt in body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                    continue
                ann = small.annotation.annotation
                head = ann.value if isinstance(ann, cst.Subscript) else ann
                tname = _typing_name(scope.resolve(head)) if isinstance(head, (cst.Name, cst.Attribute)) else None
                if tname in ("ClassVar", "KW_ONLY", "dataclasses.KW_ONLY", "InitVar") or (
                    dotted_name(head) or ""
                ).endswith(("ClassVar", "KW_ONLY", "InitVar")):
                    continue
                out.append(self._field(small, cls, scope))
        return out

    def _field(self, node: cst.AnnAssign, cls: ClassRef, scope: Scope) -> FieldInfo:
        assert isinstance(node.target, cst.Name)  # own_fields reads only named fields
        name = node.target.value
        info = FieldInfo(name, cls, node.annotation.annotation, None, None, None, True, node.value is not None)
        value = node.value
        if isinstance(value, cst.Call) and (dotted_name(value.func) or "").rsplit(".", 1)[-1] == "field":
            ref = scope.resolve(value.func)
            if isinstance(ref, ExternalRef) and ref.dotted in ("field", "dataclasses.field"):
                info.has_default = False
                for arg in value.args:
                    key = arg.keyword.value if arg.keyword is not None else None
                    if key == "default":
                        info.default, info.has_default = arg.value, True
                    elif key == "default_factory":
                        info.default_factory, info.has_default = arg.value, True
                    elif key == "metadata":
                        info.metadata = arg.value
                    elif key == "init":
                        try:
                            info.init = bool(self.evaluator.evaluate(arg.value, scope))
                        except NotLiteral:
                            self.warnings.append(f"{cls.qualname}.{name}: init= not literal, taken as True")
                return info
        info.default = value
        return info

    def fields(self, cls: ClassRef) -> list[FieldInfo]:
        ordered: dict[str, FieldInfo] = {}
        for base in reversed(self.mro(cls)):
            if _is_dataclass(base):
                for f in self.own_fields(base):
                    ordered[f.name] = f
        return list(ordered.values())

    # ---- flags -------------------------------------------------------------------------------------------

    def default_value(self, f: FieldInfo, scope: Scope) -> object:
        if f.default_factory is not None:
            node = f.default_factory
            if isinstance(node, cst.Lambda) and not node.params.params:
                return self.evaluator.evaluate_or_expr(node.body, scope)
            ref = scope.resolve(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
            if isinstance(ref, ExternalRef) and ref.dotted in ("list", "dict", "tuple", "set"):
                return {"list": [], "dict": {}, "tuple": (), "set": []}[ref.dotted]
            return Expr(f"{scope.code(node)}()")
        if f.default is not None:
            return self.evaluator.evaluate_or_expr(f.default, scope)
        if f.has_default:
            return None
        return Expr("dataclasses.MISSING")

    def flags(self, cls: ClassRef, exclude: set[str], condition: str | None) -> list[Flag]:
        out = []
        for f in self.fields(cls):
            if f.name in exclude or not f.init:
                continue
            flag = self.flag(f, cls, condition)
            if flag is not None:
                out.append(flag)
        return out

    def flag(self, f: FieldInfo, cls: ClassRef, condition: str | None) -> Flag | None:
        scope = Scope(self.index, f.owner.module)
        where = f"{cls.name}.{f.name}" if f.owner is cls else f"{cls.name}.{f.name} (from {f.owner.name})"
        default = self.default_value(f, scope)
        if isinstance(default, Expr) and default.source == "dataclasses.MISSING":
            self.warnings.append(f"{where}: no default; ArgumentGroupFactory would fail on it")
        kwargs: dict[str, object] = {"dest": f.name, "default": default}
        arg_names = ["--" + f.name.replace("_", "-")]
        meta = self._argparse_meta(f, scope)
        type_value: str | None = None
        action = "store"
        try:
            inferred = extract_type(self.annotations.term(f.annotation, scope))
            type_value = inferred.pop("type")  # type: ignore[assignment]
            kwargs.update(inferred)
            if type_value == "bool":
                if isinstance(default, Expr):
                    self.warnings.append(f"{where}: bool field with a computed default; its action is not known")
                action = "store_true" if _equals_false(default) else "store_false"
                type_value = None
                if action == "store_false":
                    arg_names = ["--no-" + f.name.replace("_", "-"), "--disable-" + f.name.replace("_", "-")]
        except TypeInferenceError as exc:
            if meta is None:
                self.warnings.append(f"{where}: {exc} and no argparse_meta; ArgumentGroupFactory would fail on it")
                return None
        if meta is not None:
            for key, node in meta.items():
                if key == "arg_names":
                    names = self.evaluator.evaluate_or_expr(node, scope)
                    if isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names):
                        arg_names = list(names)
                    else:
                        self.warnings.append(f"{where}: arg_names not literal")
                elif key == "type":
                    type_value = type_name(node, scope)
                elif key == "action":
                    action = action_name(node, scope, self.evaluator)
                elif key == "nargs":
                    kwargs["nargs"] = nargs_value(node, scope, self.evaluator)
                else:
                    kwargs[key] = self.evaluator.evaluate_or_expr(node, scope)
        return build_flag(
            arg_names, kwargs, type_name=type_value, action=action, origin=f"dataclass {where}", condition=condition
        )

    def _argparse_meta(self, f: FieldInfo, scope: Scope) -> dict[str, cst.BaseExpression] | None:
        if f.metadata is None:
            return None
        node = f.metadata
        if isinstance(node, (cst.Name, cst.Attribute)):
            ref = scope.resolve(node)
            if isinstance(ref, (ValueRef, LocalValue)):
                node = ref.expr
        if not isinstance(node, cst.Dict):
            self.warnings.append(f"{f.owner.name}.{f.name}: metadata is not a dict literal; ignored")
            return None
        for el in node.elements:
            if isinstance(el, cst.DictElement):
                try:
                    key = self.evaluator.evaluate(el.key, scope)
                except NotLiteral:
                    continue
                if key == "argparse_meta":
                    if not isinstance(el.value, cst.Dict):
                        self.warnings.append(f"{f.owner.name}.{f.name}: argparse_meta is not a dict literal; ignored")
                        return None
                    out: dict[str, cst.BaseExpression] = {}
                    for item in el.value.elements:
                        if not isinstance(item, cst.DictElement):
                            continue
                        try:
                            k = self.evaluator.evaluate(item.key, scope)
                        except NotLiteral:
                            continue
                        if isinstance(k, str):
                            out[k] = item.value
                    return out
        return None


def _equals_false(value: object) -> bool:
    if isinstance(value, bool) or (isinstance(value, (int, float)) and not isinstance(value, bool)):
        return value == False  # noqa: E712 - the factory compares with ==, so 0 and 0.0 count
    return False
