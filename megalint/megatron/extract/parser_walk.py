"""Follow arguments.py's parser builder in execution order and collect every argparse action it would add.

Starting at `parse_args`, the walk visits statements in order, descends into module-level functions of
arguments.py that are called (`add_megatron_arguments`, each `_add_*_args`), and records:
- `<group>.add_argument(...)` calls, with literal evaluation of their keywords;
- `<factory>.build_group(...)` where the factory is `ArgumentGroupFactory(<dataclass>, exclude=...)`, created in
  place or bound to a local name earlier in the function; `exclude` may be a literal or a local list.
Calls under `if`/`try`/loops are kept and carry the source of their condition.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from .dataclass_flags import DataclassReader, TypeInferenceError
from .kwargs import action_name, nargs_value, type_name
from .model import Flag, build_flag
from .pymodules import ClassRef, FuncRef, ModuleIndex, ModuleInfo, dotted_name, import_bindings
from .values import Evaluator, LocalValue, NotLiteral, Scope

FACTORY_CLASS = "ArgumentGroupFactory"
ENTRY_FUNCTIONS = ("parse_args", "add_megatron_arguments")


class _CallCollector(cst.CSTVisitor):
    """Calls in one statement, outermost first, not descending into lambdas or nested definitions."""

    def __init__(self) -> None:
        self.calls: list[cst.Call] = []

    def visit_Call(self, node: cst.Call) -> bool:
        self.calls.append(node)
        return True

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


class ParserWalker:
    def __init__(self, index: ModuleIndex, module: ModuleInfo, warnings: list[str]):
        self.index = index
        self.module = module
        self.evaluator = Evaluator(index)
        self.dataclasses = DataclassReader(self.evaluator, warnings)
        self.warnings = warnings
        self.flags: list[Flag] = []
        self._stack: list[int] = []
        # names that hold the parser or one of its groups, per function scope: a call passing one of them into
        # another module's function is followed, since that function may add arguments
        self._parsers: dict[int, set[str]] = {}

    def run(self) -> list[Flag]:
        entry = next((name for name in ENTRY_FUNCTIONS if self.module.function(name) is not None), None)
        if entry is None:
            raise LookupError(f"no {' or '.join(ENTRY_FUNCTIONS)} function in {self.module.name}")
        self.walk_function(FuncRef(self.module, self.module.function(entry)), ())  # type: ignore[arg-type]
        return self.flags

    # ---- statements --------------------------------------------------------------------------------------

    def walk_function(self, ref: FuncRef, conditions: tuple[str, ...]) -> None:
        func = ref.node
        if id(func) in self._stack:
            return
        self._stack.append(id(func))
        try:
            scope = Scope(self.index, ref.module)
            params = func.params.params
            self._parsers[id(scope)] = {params[0].name.value} if params else set()
            body = func.body.body if isinstance(func.body, cst.IndentedBlock) else ()
            name = ref.name if ref.module is self.module else f"{ref.module.name}.{ref.name}"
            self.walk_block(body, scope, name, conditions)
        finally:
            self._stack.pop()
            self._parsers.pop(id(scope), None)

    def walk_block(
        self,
        body: Sequence[cst.BaseStatement | cst.BaseSmallStatement],
        scope: Scope,
        func: str,
        conditions: tuple[str, ...],
    ) -> None:
        for stmt in body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self.walk_small(small, scope, func, conditions)
            elif isinstance(stmt, cst.If):
                self.walk_if(stmt, scope, func, conditions)
            elif isinstance(stmt, cst.Try):
                self.walk_block(stmt.body.body, scope, func, conditions)
                for handler in stmt.handlers:
                    label = "except " + (scope.code(handler.type) if handler.type is not None else "")
                    self.walk_block(handler.body.body, scope, func, conditions + (label.strip(),))
                if stmt.orelse is not None:
                    self.walk_block(stmt.orelse.body.body, scope, func, conditions)
                if stmt.finalbody is not None:
                    self.walk_block(stmt.finalbody.body.body, scope, func, conditions)
            elif isinstance(stmt, cst.With):
                self.walk_block(stmt.body.body, scope, func, conditions)
            elif isinstance(stmt, (cst.For, cst.While)):
                head = (
                    f"for {scope.code(stmt.target)} in {scope.code(stmt.iter)}"
                    if isinstance(stmt, cst.For)
                    else f"while {scope.code(stmt.test)}"
                )
                self.walk_block(stmt.body.body, scope, func, conditions + (head,))
                if stmt.orelse is not None:
                    self.walk_block(stmt.orelse.body.body, scope, func, conditions + (head,))

    def walk_if(self, stmt: cst.If, scope: Scope, func: str, conditions: tuple[str, ...]) -> None:
        test = scope.code(stmt.test)
        self.walk_block(stmt.body.body, scope, func, conditions + (test,))
        orelse = stmt.orelse
        if isinstance(orelse, cst.If):
            self.walk_if(orelse, scope, func, conditions + (f"not ({test})",))
        elif orelse is not None:
            self.walk_block(orelse.body.body, scope, func, conditions + (f"not ({test})",))

    def walk_small(self, small: cst.BaseSmallStatement, scope: Scope, func: str, conditions: tuple[str, ...]) -> None:
        if isinstance(small, (cst.Import, cst.ImportFrom)):
            new, _stars = import_bindings(small, scope.module.name, scope.module.is_package)
            scope.local.update(new)
            return
        collector = _CallCollector()
        small.visit(collector)
        handled: set[int] = set()
        for call in collector.calls:
            if id(call) in handled:
                continue
            self.handle_call(call, scope, func, conditions, handled)
        if isinstance(small, cst.Assign):
            parser_like = isinstance(small.value, cst.Call) and self._passes_parser(small.value, scope)
            for target in small.targets:
                if isinstance(target.target, cst.Name):
                    scope.local[target.target.value] = LocalValue(scope.child(), small.value)
                    if parser_like:
                        self._parsers.setdefault(id(scope), set()).add(target.target.value)
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
            scope.local[small.target.value] = LocalValue(scope.child(), small.value)
        elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
            name = small.target.value
            if isinstance(small.operator, cst.AddAssign) and name in scope.local:
                # the copied scope still holds the previous binding, which the left operand reads
                before = scope.child()
                combined = cst.BinaryOperation(left=cst.Name(name), operator=cst.Add(), right=small.value)
                scope.local[name] = LocalValue(before, combined)

    # ---- calls -------------------------------------------------------------------------------------------

    def handle_call(
        self, call: cst.Call, scope: Scope, func: str, conditions: tuple[str, ...], handled: set[int]
    ) -> None:
        condition = " and ".join(conditions) if conditions else None
        if isinstance(call.func, cst.Attribute):
            method = call.func.attr.value
            if method == "add_argument":
                self.add_argument(call, scope, func, condition)
                return
            if method == "build_group":
                factory = self.factory_call(call.func.value, scope)
                if factory is not None:
                    handled.add(id(factory[0]))
                    self.build_group(factory, scope, func, condition)
                return
        if isinstance(call.func, cst.Name) and isinstance(scope.local.get(call.func.value), LocalValue):
            return
        local_def = (
            isinstance(call.func, cst.Name)
            and call.func.value not in scope.local
            and isinstance(scope.module.bindings.get(call.func.value), cst.FunctionDef)
        )
        # resolving a name may parse its module: only do so for calls that could add arguments
        if local_def or self._passes_parser(call, scope):
            ref = scope.resolve(call.func)
            if isinstance(ref, FuncRef):
                self.walk_function(ref, conditions)

    def _passes_parser(self, call: cst.Call, scope: Scope) -> bool:
        names = self._parsers.get(id(scope), set())
        if isinstance(call.func, cst.Attribute):
            if isinstance(call.func.value, cst.Name) and call.func.value.value in names:
                return True
            if call.func.attr.value == "ArgumentParser":
                return True
        return any(isinstance(a.value, cst.Name) and a.value.value in names for a in call.args)

    def factory_call(self, receiver: cst.BaseExpression, scope: Scope) -> tuple[cst.Call, Scope] | None:
        """The `ArgumentGroupFactory(...)` call (and its scope) a `.build_group` receiver denotes."""
        node, node_scope = receiver, scope
        if isinstance(receiver, cst.Name) and receiver.value in scope.local:
            bound = scope.local[receiver.value]
            if isinstance(bound, LocalValue):
                node, node_scope = bound.expr, bound.scope
        if not isinstance(node, cst.Call):
            return None
        ref = node_scope.resolve(node.func)
        if isinstance(ref, ClassRef) and self._is_factory_class(ref):
            if ref.name != FACTORY_CLASS:
                self.warnings.append(f"{ref.name} subclasses {FACTORY_CLASS}; its flags follow the base class rules")
            return node, node_scope
        if (dotted_name(node.func) or "").rsplit(".", 1)[-1] == FACTORY_CLASS:
            return node, node_scope
        return None

    def _is_factory_class(self, ref: ClassRef) -> bool:
        try:
            return any(c.name == FACTORY_CLASS for c in self.dataclasses.mro(ref))
        except TypeInferenceError:
            return False

    def build_group(self, factory: tuple[cst.Call, Scope], scope: Scope, func: str, condition: str | None) -> None:
        call, fscope = factory
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        keywords = {a.keyword.value: a.value for a in call.args if a.keyword is not None}
        cls_node = keywords.get("src_cfg_class", positional[0] if positional else None)
        exclude_node = keywords.get("exclude", positional[1] if len(positional) > 1 else None)
        if cls_node is None:
            self.warnings.append(f"{func}: {FACTORY_CLASS}() without a dataclass")
            return
        cls = fscope.resolve(cls_node)
        if not isinstance(cls, ClassRef):
            self.warnings.append(
                f"{func}: dataclass {fscope.code(cls_node)} not found in the tree; its flags are missing"
            )
            return
        exclude: set[str] = set()
        if exclude_node is not None:
            try:
                value = self.evaluator.evaluate(exclude_node, fscope)
            except NotLiteral:
                value = None
            if value is None and not (isinstance(exclude_node, cst.Name) and exclude_node.value == "None"):
                self.warnings.append(f"{func}: exclude list of {cls.name} not readable; no field excluded")
            elif isinstance(value, Iterable):
                exclude = {str(v) for v in value}
            elif value is not None:
                self.warnings.append(f"{func}: exclude list of {cls.name} is not a list; no field excluded")
        try:
            self.flags.extend(self.dataclasses.flags(cls, exclude, condition))
        except TypeInferenceError as exc:
            self.warnings.append(f"{func}: {cls.name}: {exc}")

    def add_argument(self, call: cst.Call, scope: Scope, func: str, condition: str | None) -> None:
        line = scope.code(call)  # for messages only
        where = f"{func}"
        names: list[str] = []
        kwargs: dict[str, object] = {}
        type_value: str | None = None
        action = "store"
        for arg in call.args:
            if arg.star:
                self.warnings.append(f"{where}: add_argument with *args/**kwargs skipped: {line[:80]}")
                return
            if arg.keyword is None:
                try:
                    value = self.evaluator.evaluate(arg.value, scope)
                except NotLiteral:
                    self.warnings.append(f"{where}: option name not literal, flag skipped: {scope.code(arg.value)}")
                    return
                if not isinstance(value, str):
                    self.warnings.append(f"{where}: option name not a string, flag skipped: {scope.code(arg.value)}")
                    return
                names.append(value)
                continue
            key = arg.keyword.value
            if key in ("help", "metavar"):
                continue
            if key == "type":
                type_value = type_name(arg.value, scope)
            elif key == "action":
                action = action_name(arg.value, scope, self.evaluator)
            elif key == "nargs":
                kwargs["nargs"] = nargs_value(arg.value, scope, self.evaluator)
            else:
                kwargs[key] = self.evaluator.evaluate_or_expr(arg.value, scope)
        if not names:
            self.warnings.append(f"{where}: add_argument without option names skipped")
            return
        self.flags.append(
            build_flag(
                names, kwargs, type_name=type_value, action=action, origin=f"arguments.py:{func}", condition=condition
            )
        )
