"""YAML with positions, fast.

ruamel.yaml's round-trip loader gives every key and value its line and column, but it is pure
Python: about 9 ms for one rule file, so a hundred rules would cost a second at every start.
When PyYAML's libyaml binding is available, rule files are composed by libyaml instead and
converted to the same ruamel structures (CommentedMap/CommentedSeq with `.lc`, quoted-string
types for the scalar style), about 40 times faster. Anything unusual (a syntax error, a merge
key, an alias) goes to ruamel, so errors and edge cases read the same either way.
"""

from __future__ import annotations

from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

_CLOADER: type[Any] | None
try:
    import yaml as _pyyaml

    _CLOADER = _pyyaml.CSafeLoader
except (ImportError, AttributeError):  # no PyYAML, or PyYAML built without libyaml
    _CLOADER = None

_STYLES = {
    '"': DoubleQuotedScalarString,
    "'": SingleQuotedScalarString,
    "|": LiteralScalarString,
    ">": FoldedScalarString,
}


class _Fallback(Exception):
    """The fast loader met what only ruamel reads as megalint expects; never leaves this module,
    where ruamel then loads the document."""


def load_ruamel(text: str) -> Any:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    return yaml.load(text)


def load(text: str, fast: bool = True) -> Any:
    """The document as ruamel round-trip data; raises ruamel's MarkedYAMLError on bad YAML."""
    if fast and _CLOADER is not None:
        try:
            return _load_libyaml(_CLOADER, text)
        except _Fallback:
            pass
    return load_ruamel(text)


def fast_available() -> bool:
    return _CLOADER is not None


def _load_libyaml(loader_class: type[Any], text: str) -> Any:
    try:
        loader = loader_class(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except _pyyaml.YAMLError:
        raise _Fallback from None
    if node is None:
        return None
    return _Converter().convert(node)


class _Converter:
    def __init__(self) -> None:
        self.scalars = _pyyaml.SafeLoader("")
        self.seen: set[int] = set()

    def convert(self, node: Any) -> Any:
        if id(node) in self.seen:  # an alias: ruamel keeps it as a shared object
            raise _Fallback
        self.seen.add(id(node))
        if isinstance(node, _pyyaml.MappingNode):
            out = CommentedMap()
            out._yaml_set_line_col(node.start_mark.line, node.start_mark.column)
            for knode, vnode in node.value:
                if knode.tag == "tag:yaml.org,2002:merge":
                    raise _Fallback
                key = self.convert(knode)
                if key in out:
                    raise _Fallback  # ruamel reports duplicate keys with its own message
                out[key] = self.convert(vnode)
                out._yaml_set_kv_line_col(
                    key,
                    [
                        knode.start_mark.line,
                        knode.start_mark.column,
                        vnode.start_mark.line,
                        vnode.start_mark.column,
                    ],
                )
            return out
        if isinstance(node, _pyyaml.SequenceNode):
            seq = CommentedSeq()
            seq._yaml_set_line_col(node.start_mark.line, node.start_mark.column)
            for i, item in enumerate(node.value):
                seq.append(self.convert(item))
                seq._yaml_set_idx_line_col(i, [item.start_mark.line, item.start_mark.column])
            return seq
        if node.tag == "tag:yaml.org,2002:str":  # most scalars: no constructor needed
            style = _STYLES.get(node.style or "")
            return node.value if style is None else style(node.value)
        try:
            value = self.scalars.construct_object(node)
        except _pyyaml.YAMLError:
            raise _Fallback from None
        if isinstance(value, str):
            if node.tag != "tag:yaml.org,2002:str":
                raise _Fallback  # a custom tag
            style = _STYLES.get(node.style or "")
            if style is not None:
                return style(value)
            return value
        if isinstance(value, bool) and node.value.lower() not in ("true", "false"):
            raise _Fallback  # YAML 1.1 `yes`/`on`: ruamel reads YAML 1.2, where they are strings
        if isinstance(value, (int, float)) or value is None:
            return value
        raise _Fallback  # timestamps, binary ...
