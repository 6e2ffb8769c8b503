"""Rule conditions in CEL (Common Expression Language): compiled once, evaluated safely.

CEL is evaluated by the `common-expression-language` package, never by Python's `eval`. On top
of the compiler this module reads an expression's tokens to learn which context paths it uses:
that lets the loader reject a misspelt root (`argz.x`) or an unknown function when the rule is
loaded, lets the engine name the missing inputs of an undecided rule, and lets it hand CEL only
the part of a large context that some rule reads (converting a context to CEL costs about 5 µs
per value, so handing over all ~900 Megatron arguments per launch would dominate the run time).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from megalint import lazy_re
from megalint.engine.cel_binding import binding
from megalint.engine.context import DEST_ROOTS, MAPPING_ROOTS, MISSING, ROOTS, lookup
from megalint.engine.short_circuit import PLAIN_STRING, Guard, decides_false, guards_of
from megalint.engine.versions import VERSION_ROOT, VERSION_TESTS, VersionError, parse_version
from megalint.errors import RuleDefinitionError

_STDLIB_EXTENSIONS = ["core", "strings", "math", "sets", "lists"]

# CEL's own functions and macros (cel-spec "List of Standard Definitions").
_BUILTINS = frozenset(
    {
        "has",
        "size",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "bool",
        "type",
        "dyn",
        "timestamp",
        "duration",
        "contains",
        "startsWith",
        "endsWith",
        "matches",
        "all",
        "exists",
        "exists_one",
        "map",
        "filter",
        "getFullYear",
        "getMonth",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
    }
)


@cache
def functions() -> frozenset[str]:
    """The functions a rule may call: CEL's, the standard library's extensions megalint enables,
    and the version tests."""
    stdlib = binding()[1]
    return (
        _BUILTINS
        | frozenset(n for ext in _STDLIB_EXTENSIONS for n in stdlib.EXTENSIONS[ext])
        | frozenset(VERSION_TESTS)
    )


# The namespaces of the namespaced functions (`math.greatest`, `sets.contains`, `strings.quote`);
# the scanner reads `math.x(` as a function call, not a context path. A test keeps it in step with
# `functions()`, so that scanning an expression needs no CEL import.
_NAMESPACES = frozenset({"math", "sets", "strings", "lists"})
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
_KEYWORDS = frozenset({"true", "false", "null", "in"})

_TOKEN = lazy_re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<str>[rRbB]{0,2}(?:'''(?:\\.|[^\\])*?'''|\"\"\"(?:\\.|[^\\])*?\"\"\"
                        |'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"))
  | (?P<num>\d+\.?\d*(?:[eE][+-]?\d+)?[uU]?|\.\d+(?:[eE][+-]?\d+)?|0[xX][0-9a-fA-F]+[uU]?)
  | (?P<ident>[_A-Za-z][_A-Za-z0-9]*)
  | (?P<op>\|\||&&|==|!=|<=|>=|[-+*/%!<>?:.,()\[\]{}])
  | (?P<bad>.)
    """,
    re.VERBOSE | re.DOTALL,
)


class ExprError(RuleDefinitionError):
    """An expression that cannot be used: `offset` is the 0-based position in its source."""

    def __init__(self, message: str, offset: int = 0):
        super().__init__(message)
        self.message = message
        self.offset = offset


@dataclass(frozen=True)
class Ref:
    """A dotted context path an expression reads (`args.num_layers`), with where it is."""

    path: str
    offset: int
    guarded: bool  # inside has(...): its absence is an answer, not a missing input
    # `'args.x' in unknown`: the one key of a map the expression asks about (what it reads of it)
    key: str | None = None

    @property
    def root(self) -> str:
        return self.path.split(".", 1)[0]


@dataclass(frozen=True)
class Scan:
    """What an expression's tokens tell without compiling it."""

    refs: tuple[Ref, ...]
    functions: tuple[tuple[str, int], ...]  # (name, offset)
    bound: frozenset[str]  # names bound by comprehension macros
    # What bounds the work of a run (EVALUATION_BUDGET): comprehensions nested in one another,
    # and the longest list written in the expression.
    nesting: int = 0
    longest_literal: int = 0
    # The operands of its top-level `&&` chain that Python can find false (short_circuit.py).
    guards: tuple[Guard, ...] = ()


# CEL has no budget of its own and runs in native code, where a run cannot be stopped: a
# condition whose comprehensions, nested over the context's lists, would take more steps than
# this is not run (the rule fails, which is reported), nor is `lists.range` past MAX_RANGE.
EVALUATION_BUDGET = 10_000_000
MAX_RANGE = 100_000


def _within_budget(sc: Scan, env: Env) -> None:
    called = dict(sc.functions)
    # `flatten()` joins the lists it is given: as long as all the lists it reads together.
    from_context = env.list_sizes(tuple(r.path for r in sc.refs))[1 if "flatten" in called else 0]
    longest = max(from_context, sc.longest_literal, MAX_RANGE if "lists.range" in called else 0, 1)
    steps = longest**sc.nesting
    if steps > EVALUATION_BUDGET:
        raise EvalFailure(
            f"the condition may take {steps:.1e} steps, over the budget of {EVALUATION_BUDGET:,}: "
            f"{sc.nesting} comprehensions nested over lists of up to {longest:,} items"
        )


def _cost(toks: list[tuple[str, str, int]]) -> tuple[int, int]:
    """(nesting, longest_literal) of an expression's tokens (see Scan)."""
    stack: list[str] = []  # per open bracket: "macro", "list" or "plain"
    items: list[int] = []  # per open list literal: its commas so far
    nesting = longest = 0
    for i, (_, text, _) in enumerate(toks):
        if text == "(":
            is_macro = i >= 2 and toks[i - 2][1] == "." and toks[i - 1][1] in _MACROS
            stack.append("macro" if is_macro else "plain")
            nesting = max(nesting, stack.count("macro"))
        elif text == "[":
            stack.append("list")
            items.append(0)
        elif text in (")", "]") and stack:
            if stack.pop() == "list" and items:
                n = items.pop()
                longest = max(longest, n + 1)
        elif text == "," and stack and stack[-1] == "list" and items:
            items[-1] += 1
    return nesting, longest


def _tokens(source: str) -> list[tuple[str, str, int]]:
    out = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup
        if kind is None or kind == "ws":
            continue
        out.append((kind, m.group(), m.start()))
    return out


def scan(source: str, toks: list[tuple[str, str, int]] | None = None) -> Scan:
    """The context paths, functions and comprehension variables an expression uses."""
    if toks is None:
        toks = _tokens(source)
    refs: list[Ref] = []
    funcs: list[tuple[str, int]] = []
    bound: set[str] = set()

    def tok(i: int) -> tuple[str, str, int]:
        return toks[i] if 0 <= i < len(toks) else ("end", "", len(source))

    i = 0
    while i < len(toks):
        kind, text, off = toks[i]
        if kind != "ident" or text in _KEYWORDS:
            i += 1
            continue
        if tok(i - 1)[1] == ".":
            if tok(i + 1)[1] == "(":  # a method call on a computed receiver
                funcs.append((text, off))
                if text in _MACROS and tok(i + 2)[0] == "ident" and tok(i + 3)[1] == ",":
                    bound.add(tok(i + 2)[1])
            i += 1
            continue
        if tok(i + 1)[1] == "(":
            funcs.append((text, off))
            if text in VERSION_TESTS:  # reads the job's version
                refs.append(Ref(VERSION_ROOT, off, False))
            i += 1
            continue
        chain = [text]
        j = i + 1
        while tok(j)[1] == "." and tok(j + 1)[0] == "ident":
            if tok(j + 2)[1] == "(":
                if len(chain) == 1 and chain[0] in _NAMESPACES:
                    funcs.append((f"{chain[0]}.{tok(j + 1)[1]}", off))
                    chain = []
                    j += 2
                else:
                    j += 1  # the main loop reads the method call
                break
            chain.append(tok(j + 1)[1])
            j += 2
        if chain:
            guarded = tok(i - 1)[1] == "(" and tok(i - 2)[1] == "has" and tok(j)[1] == ")"
            refs.append(Ref(".".join(chain), off, guarded, _asked_key(chain, tok(i - 2), tok(i - 1), tok(j))))
        i = j
    return Scan(tuple(refs), tuple(funcs), frozenset(bound), *_cost(toks), guards_of(toks))


def _asked_key(
    chain: list[str], literal: tuple[str, str, int], keyword: tuple[str, str, int], after: tuple[str, str, int]
) -> str | None:
    """The key of `'KEY' in ROOT` (a map root, whole): the expression reads that key alone."""
    if len(chain) != 1 or chain[0] not in MAPPING_ROOTS or keyword[1] != "in" or after[1] in (".", "["):
        return None
    if literal[0] != "str" or not PLAIN_STRING.fullmatch(literal[1]):
        return None
    return literal[1][1:-1]


class NeedInputs(Exception):
    """Evaluation reached a value the context does not have; never leaves megalint.engine, where it
    makes the rule undecided."""

    def __init__(self, paths: tuple[str, ...]):
        super().__init__(", ".join(paths))
        self.paths = paths


class EvalFailure(RuleDefinitionError):
    """Evaluation failed for another reason (a type mismatch, a division by zero ...)."""


@dataclass
class Expr:
    """A checked expression; its CEL program is compiled when the expression first runs."""

    source: str
    scan: Scan
    _program: Any = field(default=None, repr=False, compare=False)  # cel.Program

    @property
    def refs(self) -> tuple[Ref, ...]:
        return self.scan.refs

    @property
    def program(self) -> Any:
        if self._program is None:
            compiled = self.source
            if "version_" in compiled:  # as in `compile`: only a version test is rewritten
                compiled = _pass_job_version(compiled, _tokens(compiled))[0]
            self._program = binding()[0].compile(compiled)
        return self._program

    def __reduce__(self) -> tuple[Callable[[str, Scan], Expr], tuple[str, Scan]]:
        # Compiled CEL programs do not pickle: a rule set read from the rule cache or sent to
        # worker processes compiles each expression again when it first runs.
        return (Expr, (self.source, self.scan))

    def run(self, env: Env) -> Any:
        sc = self.scan
        if sc.nesting > 1:
            _within_budget(sc, env)
        elif sc.guards and any(decides_false(g, env.scope) for g in sc.guards):
            return False  # an operand of its `&&` chain is false: so is the whole
        try:
            return self.program.execute(env.cel)
        except KeyError as e:
            raise NeedInputs(self._missing(env, str(e.args[0]) if e.args else "?")) from None
        except RuntimeError as e:
            if "Undefined variable" in str(e):
                raise NeedInputs(self._missing(env, None)) from None
            raise EvalFailure(_first_line(str(e))) from None
        except Exception as e:  # the CEL binding raises TypeError, ValueError, ZeroDivisionError
            raise EvalFailure(f"{type(e).__name__}: {_first_line(str(e))}") from None

    def _missing(self, env: Env, key: str | None) -> tuple[str, ...]:
        out: list[str] = []
        for ref in self.scan.refs:
            if ref.guarded or ref.root in self.scan.bound:
                continue
            if lookup(env.scope, ref.path) is MISSING:
                # Name the first absent step: `gpu.compute_capability`, not deeper.
                parts = ref.path.split(".")
                for n in range(1, len(parts) + 1):
                    if lookup(env.scope, ".".join(parts[:n])) is MISSING:
                        path = ".".join(parts[:n])
                        break
                if path not in out:
                    out.append(path)
        if not out:
            out.append(key if key is not None else self.source)
        return tuple(out)


_JOB_VERSION_ARG = f"{VERSION_ROOT}, "


def _pass_job_version(source: str, toks: list[tuple[str, str, int]]) -> tuple[str, list[int]]:
    """The source with the job's version passed to each version test, and where it was inserted."""
    at = [
        toks[i + 1][2] + 1
        for i, (kind, text, _) in enumerate(toks)
        if kind == "ident"
        and text in VERSION_TESTS
        and i + 1 < len(toks)
        and toks[i + 1][1] == "("
        and (i == 0 or toks[i - 1][1] != ".")
    ]
    out, last = [], 0
    for pos in at:
        out += [source[last:pos], _JOB_VERSION_ARG]
        last = pos
    out.append(source[last:])
    return "".join(out), at


def _source_offset(offset: int, inserted_at: list[int]) -> int:
    """Where an offset of the source with the job's version passed lies in the rule's source."""
    shift = 0
    for pos in inserted_at:
        if offset < pos + shift:
            break
        shift += len(_JOB_VERSION_ARG)
        if offset < pos + shift:
            return pos
    return offset - shift


def _check_version_tests(toks: list[tuple[str, str, int]]) -> None:
    """Each version test takes one version in quotes that megalint can read."""
    for i, (kind, text, off) in enumerate(toks):
        if kind != "ident" or text not in VERSION_TESTS or (i > 0 and toks[i - 1][1] == "."):
            continue
        args = toks[i + 1 : i + 4]
        if len(args) < 3 or args[0][1] != "(" or args[1][0] != "str" or args[2][1] != ")":
            raise ExprError(f"{text} takes one version in quotes, like {text}('0.16')", off)
        literal = args[1][1]
        if literal[:1] not in "'\"" or literal[:3] in ("'''", '"""'):
            raise ExprError(f"{text} takes one version in quotes, like {text}('0.16')", args[1][2])
        try:
            parse_version(literal[1:-1])
        except VersionError as e:
            raise ExprError(f"{text}: {e}", args[1][2]) from None


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else text


_CEL_ERROR = lazy_re.compile(r"ERROR: <input>:(\d+):(\d+): (.*)")


def compile_expr(source: str, names: Iterable[str] = (), dests: Collection[str] | None = None) -> Expr:
    """Compile a CEL expression and check the names it uses.

    `names` are variables bound around the expression (a `for_each` variable); every other
    root must be a context root. With `dests`, every `args.NAME` and `given.NAME` must be one.
    """
    if not source.strip():
        raise ExprError("empty expression")
    toks = _tokens(source)
    compiled: str = source
    inserted_at: list[int] = []
    if "version_" in source:  # most expressions test no version: their tokens need no second look
        _check_version_tests(toks)
        compiled, inserted_at = _pass_job_version(source, toks)
    try:
        program = binding()[0].compile(compiled)
    except Exception as e:  # the binding raises ValueError with the parser's report
        text = str(e)
        m = _CEL_ERROR.search(text)
        if m:
            line, col, msg = int(m.group(1)), int(m.group(2)), m.group(3).strip()
            lines = compiled.split("\n")
            offset = _source_offset(sum(len(ln) + 1 for ln in lines[: line - 1]) + col - 1, inserted_at)
            raise ExprError(f"invalid CEL: {msg}", min(offset, len(source))) from None
        raise ExprError(f"invalid CEL: {_first_line(text)}") from None
    sc = scan(source, toks)
    allowed = set(ROOTS) | set(names) | sc.bound
    for ref in sc.refs:
        parts = ref.path.split(".")
        root = parts[0]
        if root not in allowed:
            raise ExprError(f"unknown name '{root}' (a rule reads {_roots_list()})", ref.offset)
        if len(parts) > 1 and root not in names:
            fields = ROOTS.get(root)
            if fields is not None and parts[1] not in fields:
                known = ", ".join(sorted(fields))
                raise ExprError(f"unknown field '{root}.{parts[1]}' (known: {known})", ref.offset)
            if dests is not None and root in DEST_ROOTS and parts[1] not in dests:
                raise ExprError(unknown_dest(parts[1], dests), ref.offset + len(root) + 1)
    for name, off in sc.functions:
        if name not in functions():
            raise ExprError(f"unknown function '{name}'", off)
    return Expr(source, sc, program)


def unknown_dest(name: str, dests: Collection[str]) -> str:
    from difflib import get_close_matches

    close = get_close_matches(name, list(dests), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"unknown Megatron argument '{name}': no shipped catalogue defines it{hint}"


def _roots_list() -> str:
    return ", ".join(ROOTS)


class Needs:
    """Which parts of a context the compiled rules read: whole roots or single keys."""

    def __init__(self) -> None:
        self.whole: set[str] = set()
        self.keys: dict[str, set[str]] = {}

    def add(self, expr: Expr, bound: Iterable[str] = ()) -> None:
        skip = set(bound) | expr.scan.bound
        for ref in expr.scan.refs:
            parts = ref.path.split(".", 2)
            root = parts[0]
            if root in skip or root not in ROOTS:
                continue
            if ref.key is not None:
                self.keys.setdefault(root, set()).add(ref.key)
            elif len(parts) == 1 or root not in MAPPING_ROOTS:
                self.whole.add(root)
            else:
                self.keys.setdefault(root, set()).add(parts[1])

    def add_path(self, path: str) -> None:
        parts = path.split(".")
        if len(parts) == 1 or parts[0] not in MAPPING_ROOTS:
            self.whole.add(parts[0])
        else:
            self.keys.setdefault(parts[0], set()).add(parts[1])

    @staticmethod
    def union(parts: Iterable[Needs]) -> Needs:
        """What any of `parts` reads."""
        out = Needs()
        for n in parts:
            out.whole |= n.whole
            for root, keys in n.keys.items():
                out.keys.setdefault(root, set()).update(keys)
        return out

    def tokens(self) -> frozenset[str]:
        """What is read, as `changes` names what changed: a whole root (`problems`) or one key
        under a root (`args.num_layers`)."""
        return frozenset(self.whole) | frozenset(f"{root}.{k}" for root, keys in self.keys.items() for k in keys)

    def select(self, ctx: Mapping[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for root in ROOTS:
            value = ctx.get(root, MISSING)
            if value is MISSING or value is None and root in MAPPING_ROOTS:
                if root in MAPPING_ROOTS:
                    out[root] = {}
                continue
            if root in self.whole or root not in MAPPING_ROOTS:
                out[root] = value
            elif root in self.keys and isinstance(value, Mapping):
                out[root] = {k: value[k] for k in self.keys[root] if k in value}
            else:
                out[root] = {}
        return out


def _sizes(value: Any) -> tuple[int, int]:
    """The length of the longest list or map in `value`, and of all of them together."""
    longest = total = 0
    todo: list[Any] = [value]
    while todo:
        value = todo.pop()
        if isinstance(value, Mapping):
            longest, total = max(longest, len(value)), total + len(value)
            todo.extend(value.values())
        elif isinstance(value, (list, tuple)):
            longest, total = max(longest, len(value)), total + len(value)
            todo.extend(value)
    return longest, total


def _bounded_range(n: int) -> list[int]:
    if n > MAX_RANGE:
        raise ValueError(f"lists.range({n}) is longer than {MAX_RANGE:,}, the most a condition may build")
    return list(range(n))


def changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> set[str]:
    """What differs between two contexts as `Needs.select` gives them: each root that differs,
    and under a mapping root each key that does (`args`, `args.num_layers`). Values are the same
    only when they are equal and of the same types throughout (`1` is not `True` to CEL)."""
    out: set[str] = set()
    for root in before.keys() | after.keys():
        a, b = before.get(root, MISSING), after.get(root, MISSING)
        if a is b:
            continue
        if root in MAPPING_ROOTS and type(a) is dict and type(b) is dict:
            keys = [k for k in a.keys() | b.keys() if not same(a.get(k, MISSING), b.get(k, MISSING))]
            out.update(f"{root}.{k}" for k in keys)
            # A rule reading the whole map may iterate it: its keys' order counts too.
            if keys or list(a) != list(b):
                out.add(root)
        elif not same(a, b):
            out.add(root)
    return out


def same(a: Any, b: Any) -> bool:
    """Whether two context values are one value to CEL: equal, of the same types, maps with
    their keys in the same order. A value of any other type is never the same (a rule reading
    it is decided again)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is str or kind is int or kind is bool or kind is float:
        return bool(a == b)
    if kind is dict:
        return list(a) == list(b) and all(same(v, b[k]) for k, v in a.items())
    if kind is list or kind is tuple:
        return len(a) == len(b) and all(map(same, a, b))
    return False


class Env:
    """One context made ready for CEL, plus the variables bound while a rule iterates."""

    def __init__(self, ctx: Mapping[str, Any], needs: Needs | None = None, selected: dict[str, Any] | None = None):
        self.ctx = ctx
        self.needs = needs
        if selected is None:
            selected = needs.select(ctx) if needs is not None else {k: v for k, v in ctx.items() if k in ROOTS}
        native, stdlib = binding()
        try:
            self.cel = native.Context(selected)
        except Exception as e:  # the binding raises TypeError/ValueError on a foreign value
            raise TypeError(f"the rule context holds a value CEL cannot represent: {e}") from None
        stdlib.add_stdlib_to_context(self.cel, _STDLIB_EXTENSIONS)
        for name, test in VERSION_TESTS.items():
            self.cel.add_function(name, test)
        self.scope: dict[str, Any] = dict(ctx)
        for root in MAPPING_ROOTS:
            self.scope.setdefault(root, {})

        # Per path read; a path under a name bound while a rule iterates is forgotten when the
        # name is bound again.
        self._list_sizes: dict[str, tuple[int, int]] = {}
        self.cel.add_function("lists.range", _bounded_range)

    def list_sizes(self, paths: tuple[str, ...]) -> tuple[int, int]:
        """The length of the longest list or map in the values at `paths` (what an expression
        reads: `args.num_layers`, `env`, a bound `problem.earlier`), and of all of them together.
        Only what is read counts: a script's ten thousand `--data-path` values do not make a
        condition on `env` expensive."""
        longest = total = 0
        for path in dict.fromkeys(paths):
            sizes = self._list_sizes.get(path)
            if sizes is None:
                value: Any = self.scope
                for part in path.split("."):
                    if not isinstance(value, Mapping) or part not in value:
                        break
                    value = value[part]
                sizes = self._list_sizes[path] = (0, 0) if value is self.scope else _sizes(value)
            longest, total = max(longest, sizes[0]), total + sizes[1]
        return longest, total

    def bind(self, name: str, value: Any) -> None:
        self.cel.add_variable(name, value)
        self.scope[name] = value
        self._forget_sizes(name)

    def unbind(self, name: str) -> None:
        self.scope.pop(name, None)
        self._forget_sizes(name)

    def _forget_sizes(self, name: str) -> None:
        for path in [p for p in self._list_sizes if p.split(".", 1)[0] == name]:
            del self._list_sizes[path]
