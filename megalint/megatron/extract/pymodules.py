"""Lazy module index over a source tree: parse only the modules a lookup reaches, resolve names through imports.

Parsing every file under megatron/ with libcst costs tens of seconds; the flag catalogue needs about a dozen
modules (arguments.py, the config dataclasses, their bases and the enums they name), so modules are parsed on
first use and cached.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import libcst as cst

from .bounds import SourceTooComplex, check_source
from .sources import ExtractError, SourceTree


@dataclass(frozen=True)
class ModuleRef:
    """A module named by an import."""

    name: str


@dataclass(frozen=True)
class ExternalRef:
    """A name bound outside the tree (stdlib, torch, builtins): only its dotted name is known."""

    dotted: str


@dataclass(eq=False)
class ClassRef:
    """A class found in a parsed module."""

    module: ModuleInfo
    node: cst.ClassDef

    @property
    def name(self) -> str:
        return self.node.name.value

    @property
    def qualname(self) -> str:
        return f"{self.module.name}.{self.name}"


@dataclass(eq=False)
class FuncRef:
    """A function found in a parsed module."""

    module: ModuleInfo
    node: cst.FunctionDef

    @property
    def name(self) -> str:
        return self.node.name.value


@dataclass(eq=False)
class ValueRef:
    """A module-level `name = expr` binding, evaluated on demand in its module's scope."""

    module: ModuleInfo
    expr: cst.BaseExpression
    name: str


Resolved = ModuleRef | ExternalRef | ClassRef | FuncRef | ValueRef


@dataclass(frozen=True)
class _FromImport:
    """A name imported with `from module import name`."""

    module: str  # absolute dotted module name
    name: str


@dataclass(frozen=True)
class _ModuleImport:
    """A module imported with `import module`."""

    module: str


@dataclass(eq=False)
class ModuleInfo:
    """A parsed module of the source tree, with what it defines and imports."""

    name: str
    is_package: bool
    tree: cst.Module
    bindings: dict[str, object] = field(default_factory=dict)
    star_imports: list[str] = field(default_factory=list)

    def code(self, node: cst.CSTNode) -> str:
        return self.tree.code_for_node(node).strip()

    def function(self, name: str) -> cst.FunctionDef | None:
        b = self.bindings.get(name)
        return b if isinstance(b, cst.FunctionDef) else None


def dotted_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = dotted_name(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def absolute_module(current: str, is_package: bool, relative_dots: int, module: str | None) -> str:
    if relative_dots == 0:
        return module or ""
    parts = current.split(".")
    if not is_package:
        parts = parts[:-1]
    if relative_dots > 1:
        parts = parts[: len(parts) - (relative_dots - 1)]
    base = ".".join(parts)
    if module:
        return f"{base}.{module}" if base else module
    return base


def import_bindings(
    stmt: cst.Import | cst.ImportFrom, current: str, is_package: bool
) -> tuple[dict[str, object], list[str]]:
    """Names bound by one import statement (and star-import sources), as unresolved import records."""
    out: dict[str, object] = {}
    stars: list[str] = []
    if isinstance(stmt, cst.Import):
        for alias in stmt.names:
            full = dotted_name(alias.name) or ""
            if alias.asname is not None:
                out[alias.asname.name.value] = _ModuleImport(full)  # type: ignore[union-attr]
            else:
                head = full.split(".")[0]
                out[head] = _ModuleImport(head)
        return out, stars
    mod = absolute_module(current, is_package, len(stmt.relative), dotted_name(stmt.module) if stmt.module else None)
    if isinstance(stmt.names, cst.ImportStar):
        stars.append(mod)
        return out, stars
    for alias in stmt.names:
        name = dotted_name(alias.name) or ""
        bound = alias.asname.name.value if alias.asname is not None else name  # type: ignore[union-attr]
        out[bound] = _FromImport(mod, name)
    return out, stars


def _collect_bindings(
    info: ModuleInfo, body: Sequence[cst.BaseStatement | cst.BaseSmallStatement], conditional: bool
) -> None:
    for stmt in body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                new: dict[str, object] = {}
                if isinstance(small, (cst.Import, cst.ImportFrom)):
                    new, stars = import_bindings(small, info.name, info.is_package)
                    info.star_imports.extend(stars)
                elif isinstance(small, cst.Assign):
                    for target in small.targets:
                        if isinstance(target.target, cst.Name):
                            new[target.target.value] = small.value
                elif (
                    isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name)
                ):
                    new[small.target.value] = small.value
                for k, v in new.items():
                    if not conditional or k not in info.bindings:
                        info.bindings[k] = v
        elif isinstance(stmt, (cst.ClassDef, cst.FunctionDef)):
            if not conditional or stmt.name.value not in info.bindings:
                info.bindings[stmt.name.value] = stmt
        elif isinstance(stmt, cst.If):
            _collect_bindings(info, stmt.body.body, True)
            orelse = stmt.orelse
            while orelse is not None:
                _collect_bindings(info, orelse.body.body, True)
                orelse = orelse.orelse if isinstance(orelse, cst.If) else None
        elif isinstance(stmt, cst.Try):
            _collect_bindings(info, stmt.body.body, conditional)
            for handler in stmt.handlers:
                _collect_bindings(info, handler.body.body, True)
        elif isinstance(stmt, cst.With):
            _collect_bindings(info, stmt.body.body, conditional)


class ModuleIndex:
    def __init__(self, tree: SourceTree):
        self.source = tree
        self._modules: dict[str, ModuleInfo | None] = {}
        self.parsed_files: list[str] = []

    def module_file(self, name: str) -> tuple[str, bool] | None:
        base = name.replace(".", "/")
        if self.source.exists(base + ".py"):
            return base + ".py", False
        if self.source.exists(base + "/__init__.py"):
            return base + "/__init__.py", True
        return None

    def get(self, name: str) -> ModuleInfo | None:
        if name in self._modules:
            return self._modules[name]
        located = self.module_file(name) if name else None
        if located is None:
            self._modules[name] = None
            return None
        path, is_package = located
        text = self.source.read(path)
        if text is None:
            self._modules[name] = None
            return None
        try:
            check_source(text)
            tree = cst.parse_module(text)
        except SourceTooComplex as exc:
            raise ExtractError(f"{self.source.label}:{path}: not read: {exc}") from None
        except cst.ParserSyntaxError as exc:
            raise ExtractError(f"{self.source.label}:{path}: cannot be parsed: {exc}") from None
        self.parsed_files.append(path)
        info = ModuleInfo(name=name, is_package=is_package, tree=tree)
        _collect_bindings(info, tree.body, False)
        self._modules[name] = info
        return info

    def lookup(self, module: ModuleInfo, name: str, _seen: frozenset[tuple[str, str]] = frozenset()) -> Resolved | None:
        """What `name` is bound to at module level in `module`, following imports; None if unbound."""
        key = (module.name, name)
        if key in _seen:
            return None
        seen = _seen | {key}
        binding = module.bindings.get(name)
        if binding is None:
            for star in module.star_imports:
                target = self.get(star)
                if target is not None:
                    found = self.lookup(target, name, seen)
                    if found is not None:
                        return found
            return None
        return self._resolve_binding(module, name, binding, seen)

    def _resolve_binding(
        self, module: ModuleInfo, name: str, binding: object, seen: frozenset[tuple[str, str]]
    ) -> Resolved | None:
        if isinstance(binding, cst.ClassDef):
            return ClassRef(module, binding)
        if isinstance(binding, cst.FunctionDef):
            return FuncRef(module, binding)
        if isinstance(binding, _ModuleImport):
            return self.module_ref(binding.module)
        if isinstance(binding, _FromImport):
            target = self.get(binding.module)
            if target is not None:
                found = self.lookup(target, binding.name, seen)
                if found is not None:
                    return found
            sub = f"{binding.module}.{binding.name}"
            if self.module_file(sub) is not None:
                return ModuleRef(sub)
            return ExternalRef(sub)
        if isinstance(binding, cst.BaseExpression):
            return ValueRef(module, binding, name)
        return None

    def module_ref(self, name: str) -> ModuleRef | ExternalRef:
        return ModuleRef(name) if self.module_file(name) is not None else ExternalRef(name)

    def resolve_binding(self, module: ModuleInfo, name: str, binding: object) -> Resolved | None:
        return self._resolve_binding(module, name, binding, frozenset())

    def attribute(self, base: Resolved, attr: str) -> Resolved | None:
        """`base.attr` where base is a module or an external name."""
        if isinstance(base, ModuleRef):
            mod = self.get(base.name)
            if mod is not None:
                found = self.lookup(mod, attr)
                if found is not None:
                    return found
            return self.module_ref(f"{base.name}.{attr}")
        if isinstance(base, ExternalRef):
            return ExternalRef(f"{base.dotted}.{attr}")
        return None
