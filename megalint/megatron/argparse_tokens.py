"""How argparse reads each word of an argv, after its _parse_optional (Lib/argparse.py, 3.11):
an option, an argument, the `--` separator, help; and how many values an action takes."""

from __future__ import annotations

from dataclasses import dataclass

from megalint import lazy_re
from megalint.megatron.argv_words import cut_word, known_prefix
from megalint.megatron.catalogue import Catalogue, FlagSpec
from megalint.shell.values import Word
from megalint.source import Span

NEG_OLD = lazy_re.compile(r"^-\d+$|^-\d*\.\d+$")  # Python <= 3.13
NEG_NEW = lazy_re.compile(r"-\.?\d")  # Python 3.14 (gh-123945, gh-124321): used with .match
_HELP = ("-h", "--help")


@dataclass
class Token:
    """One word of an argv as argparse reads it."""

    kind: str  # "O" option, "A" argument, "S" splat, "X" unknown word, "U" unreadable option,
    #            "-" the "--" separator, "H" help
    word: Word
    index: int
    text: str | None = None
    option: str | None = None
    spec: FlagSpec | None = None
    explicit: Word | None = None  # value after "="
    explicit_text: str | None = None
    flag_span: Span | None = None
    from_equals: bool = False  # the value part of "--x=v"


def classify(word: Word, index: int, cat: Catalogue, after_dashdash: bool) -> Token:
    if word.splat is not None:
        return Token("S", word, index)
    text = word.text
    if after_dashdash:
        return Token("A", word, index, text)
    if text is None:
        prefix = known_prefix(word)
        if len(prefix) >= 2 and prefix[0] == "-" and (prefix[1] == "-" or prefix[1].isalpha()):
            if "=" in prefix:
                opt = prefix.split("=", 1)[0]
                spec = cat.lookup(opt)
                if spec is not None:
                    return Token(
                        "O",
                        word,
                        index,
                        None,
                        opt,
                        spec,
                        cut_word(word, len(opt) + 1),
                        None,
                        cut_word(word, 0, len(opt)).span,
                    )
            return Token("U", word, index)
        return Token("X", word, index)
    if text == "--":
        return Token("-", word, index, text)
    if not text or text[0] != "-":
        return Token("A", word, index, text)
    spec = cat.lookup(text)
    if spec is not None:
        return Token("O", word, index, text, text, spec, flag_span=word.span)
    if text in _HELP:
        return Token("H", word, index, text, text, flag_span=word.span)
    if len(text) == 1:
        return Token("A", word, index, text)
    if "=" in text:
        opt, explicit = text.split("=", 1)
        spec = cat.lookup(opt)
        if spec is not None or opt in _HELP:
            return Token(
                "O" if spec else "H",
                word,
                index,
                text,
                opt,
                spec,
                cut_word(word, len(opt) + 1),
                explicit,
                cut_word(word, 0, len(opt)).span,
            )
    if NEG_NEW.match(text) or NEG_OLD.match(text):
        return Token("A", word, index, text)
    if " " in text:
        return Token("A", word, index, text)
    opt = text.split("=", 1)[0]
    return Token("O", word, index, text, opt, None, flag_span=cut_word(word, 0, len(opt)).span)


def nargs_range(spec: FlagSpec) -> tuple[int, int | None]:
    n = spec.nargs
    if n is None:
        return (1, 1)
    if n == "?":
        return (0, 1)
    if n == "*":
        return (0, None)
    if n == "+":
        return (1, None)
    return (int(n), int(n))


def expected(spec: FlagSpec) -> str:
    n = spec.nargs
    if n is None:
        return "expected one argument"
    if n == "+":
        return "expected at least one argument"
    if n == "?":
        return "expected at most one argument"
    if isinstance(n, int):
        return f"expected {n} argument{'s' if n != 1 else ''}"
    return "expected arguments"
