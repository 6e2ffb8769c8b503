"""Generated and mutated scripts: the shell front end never raises anything but InputError,
and finishes in bounded time (see robust.TIME_LIMIT_S)."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.shell.robust import run_bytes, run_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(ROOT, "fixtures")


def _fixture_texts():
    out = []
    for sub in ("idioms", "launchers"):
        d = os.path.join(FIXTURES, sub)
        for name in sorted(os.listdir(d)):
            with open(os.path.join(d, name), encoding="utf-8") as fh:
                out.append((f"{sub}/{name}", fh.read()))
    return out


FIXTURE_TEXTS = _fixture_texts()
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Shell-ish tokens: enough keywords and punctuation for the generator to build (and break)
# every construct of the survey.
TOKENS = [
    "if",
    "then",
    "elif",
    "else",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "while",
    "until",
    "case",
    "esac",
    ";;",
    "function",
    "f()",
    "{",
    "}",
    "(",
    ")",
    "((",
    "))",
    "[",
    "]",
    "[[",
    "]]",
    "!",
    "&&",
    "||",
    "|",
    ";",
    "&",
    "\n",
    "\n",
    "\n",
    " \\\n",
    "\\",
    "\r\n",
    "#",
    "# c",
    '"',
    "'",
    "`",
    "$",
    "$(",
    "${",
    "$((",
    "$1",
    "$@",
    '"$@"',
    "$#",
    "$X",
    "${X}",
    "${X:-8}",
    "${X:=2}",
    "${X:+y}",
    "${X#*/}",
    "${X//a/b}",
    "${X:1:2}",
    "${#X}",
    "${A[@]}",
    "${!X}",
    "${X^^}",
    "X=",
    "X+=",
    "A=(",
    "A+=(",
    "A[1]=",
    "Y=$X$X",
    "export",
    "local",
    "declare -a",
    "unset",
    "readonly",
    "shift",
    "set --",
    "source",
    ".",
    "eval",
    "bash -c",
    "sh -c",
    "exit",
    "return",
    "break",
    "let",
    "<<EOF",
    "<<'EOF'",
    "<<-EOF",
    "EOF",
    "<<<",
    "<(",
    ">",
    "2>&1",
    ">>",
    "<",
    "<Specify path>",
    "=~",
    "==",
    "=",
    "-eq",
    "-gt",
    "-z",
    "-n",
    "1",
    "0",
    "8",
    "-1",
    "9223372036854775807",
    "**",
    "/",
    "%",
    "*",
    "+",
    "-",
    "<<",
    "torchrun",
    "srun",
    "deepspeed",
    "mpirun",
    "python",
    "-m",
    "torch.distributed.run",
    "pretrain_gpt.py",
    "--nproc_per_node",
    "--nnodes",
    "--tensor-model-parallel-size",
    "--num-layers",
    "sbatch",
    "#SBATCH --nodes=2",
    "x",
    "a.sh",
    "*",
    "?",
    "[a-z]",
    "~",
    "$'\\n'",
    '$"x"',
    "\u4e2d\u6587",
    "\t",
]


@FAST
@given(st.binary(max_size=3000))
def test_random_bytes(data):
    run_bytes(data)


@FAST
@given(st.text(max_size=1500))
def test_random_text(text):
    run_text(text)


@FAST
@given(st.lists(st.sampled_from(TOKENS), max_size=300), st.sampled_from([" ", "", " ", "\n"]))
def test_token_soup(tokens, sep):
    text = sep.join(tokens)
    run_text(text)
    run_text(text.replace("\n", "\r\n"))


@st.composite
def mutated_fixture(draw):
    name, text = draw(st.sampled_from(FIXTURE_TEXTS))
    for _ in range(draw(st.integers(1, 12))):
        op = draw(st.sampled_from(["delete", "insert", "duplicate", "swap"]))
        if not text:
            break
        i = draw(st.integers(0, len(text) - 1))
        if op == "delete":
            j = min(len(text), i + draw(st.integers(1, 20)))
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + draw(st.sampled_from(TOKENS + ["\0", "\ufeff", "\udcff"[:0] + "\x85"])) + text[i:]
        elif op == "duplicate":
            j = min(len(text), i + draw(st.integers(1, 200)))
            text = text[:j] + text[i:j] + text[j:]
        else:
            j = draw(st.integers(0, len(text) - 1))
            a, b = sorted((i, j))
            if a < b:
                text = text[:a] + text[b] + text[a + 1 : b] + text[a] + text[b + 1 :]
    return name, text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_fixture())
def test_mutated_fixtures(case):
    name, text = case
    # The fixture's own directory, so that `source ./params.sh` still finds its file.
    path = os.path.join(FIXTURES, name)
    run_text(text, path=path)
    run_bytes(text.encode("utf-8", "surrogatepass"), path=path)


# One level of nesting: (opening, closing). `{}` is the level's number.
NESTERS = [
    ('if [ "$1" = a{} ]; then\n', "fi\n"),
    ("if true; then\n", "else X=0; fi\n"),
    ("while [ $N -gt {} ]; do\n", "done\n"),
    ("for i{} in 1 2; do\n", "done\n"),
    ("case $1 in a{})\n", ";; *) Y={};; esac\n"),
    ("f{}() {{\n", '}}\nf{} "$@"\n'),
    ("(\n", ")\n"),
    ("{{\n", "}}\n"),
    ("X=$(\n", ")\n"),
    ('eval "\n', '"\n'),
    ("bash -c '\n", "'\n"),
]


@FAST
@given(st.lists(st.sampled_from(range(len(NESTERS))), min_size=1, max_size=400))
def test_deep_nesting(levels):
    opens, closes = [], []
    for k, idx in enumerate(levels):
        o, c = NESTERS[idx]
        opens.append(o.replace("{}", str(k)).replace("{{", "{").replace("}}", "}"))
        closes.append(c.replace("{}", str(k)).replace("{{", "{").replace("}}", "}"))
    body = "X=$((X+1))\ntorchrun --nproc_per_node 8 pretrain_gpt.py --num-layers $X --hidden-size 8\n"
    run_text("".join(opens) + body + "".join(reversed(closes)))


ARITH = [
    "1/0",
    "1%0",
    "2**63",
    "2**-1",
    "9223372036854775807+1",
    "-9223372036854775808/-1",
    "2**999999999999",
    "1<<99999",
    "X=X+1",
    "X++",
    "++X",
    "Y=$X",
    "(1",
    "1)",
    "1?2",
    "1?2:",
    "08",
    "0x",
    "64#@@",
    "1#1",
    "99#1",
    "A[1]",
    "$(echo 3)",
    "X*=X",
    "X/=0",
    "!",
    "~",
    "X",
]


@FAST
@given(st.lists(st.sampled_from(ARITH), min_size=1, max_size=12), st.sampled_from(["+", "*", "**", ",", " ", "/"]))
def test_pathological_arithmetic(parts, op):
    expr = op.join(parts)
    run_text(
        f"X=3\nY=$(( {expr} ))\n(( {expr} ))\nlet 'Z={expr}'\necho ${{X:$(( {expr} ))}}\n"
        f"for (( i = 0; {expr}; i++ )); do W=$i; done\n"
    )


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(1, 70),
    st.sampled_from(
        [
            "X=$X$X",
            'X+="$X"',
            'A+=("${A[@]}")',
            'X="${X//a/aa}"',
            'set -- "$@" "$@"',
            "X=$X$X$X$X",
            "A=(${A[@]} ${A[@]})",
        ]
    ),
)
def test_self_referential_growth(n, stmt):
    loop = " ".join(str(i) for i in range(n))
    facts, _ = run_text(
        f'X=ab\nA=(a b)\nset -- a b\nfor i in {loop}; do {stmt}; done\necho "$X" "${{A[@]}}" "$@"\n'
        f"torchrun pretrain_gpt.py --num-layers 2 --hidden-size $X ${{A[@]}}\n"
    )
    for p in facts.paths:
        for v in p.variables.values():
            if v.value is not None and v.value.text is not None:
                assert len(v.value.text) <= 65_536


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(st.integers(1, 5), st.data())
def test_source_graphs(tmp_path_factory, n, data):
    """Any graph of files sourcing each other (cycles, self-loops, diamonds)."""
    d = tmp_path_factory.mktemp("src")
    edges = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=12))
    for i in range(n):
        lines = [f"V{i}=$((V{i} + 1))", f"TP=${{TP:-{i + 1}}}"]
        lines += [
            f"source ./f{b}.sh" if k % 2 else f'. "$(dirname "$0")/f{b}.sh"' for k, (a, b) in enumerate(edges) if a == i
        ]
        lines.append(
            f"torchrun --nproc_per_node 8 pretrain_gpt.py --tensor-model-parallel-size $TP --num-layers {i + 2}"
        )
        (d / f"f{i}.sh").write_text("\n".join(lines) + "\n")
    path = str(d / "f0.sh")
    with open(path, "rb") as fh:
        run_bytes(fh.read(), path=path)


@FAST
@given(
    st.sampled_from(['"', "'", "<<EOF\n", "<<'EOF'\n", "$(", "${", "$((", "`", "(", "{", "[[", "case x in"]),
    st.integers(0, 200),
)
def test_unterminated(opener, filler):
    run_text("A=1\nX=" + opener + "abc " * filler + "\ntorchrun pretrain_gpt.py --num-layers $A\n")
