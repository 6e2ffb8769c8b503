"""tree-sitter-bash cuts `$E/c/$D/t` in two at the second `$` (`X=$E/c/$` then a command `D/t`;
or two arguments). Such a word's value is unknown, with the reason, never read as something
else: the rest of the word must not become a command, a lost value or a stray argument."""

from __future__ import annotations

from linting import lint

from megalint.pipeline import FileResult


def save_value(result: FileResult) -> tuple[str | None, str | None]:
    (launch,) = result.launches
    words = [w for w in launch.launch.argv]
    i = next(k for k, w in enumerate(words) if w.text == "--save")
    value = words[i + 1]
    reason = value.unknown.reason if value.unknown is not None else None
    return value.text, reason


def test_an_assigned_value_cut_by_the_parser_is_unknown():
    result = lint(
        "#!/bin/bash\n"
        "CKPT=$EXP/ckpt/$DTYPE/tp2\n"
        'torchrun --nproc_per_node 8 pretrain_gpt.py --num-layers 2 --save "$CKPT"\n',
        memory=False,
    )
    text, reason = save_value(result)
    assert text is None
    assert reason is not None and "cut in two by the shell parser" in reason
    assert [d.code for d in result.diagnostics if d.code in ("ML505", "ML509")] == []


def test_an_argument_cut_by_the_parser_is_one_unknown_word():
    result = lint(
        "#!/bin/bash\ntorchrun --nproc_per_node 8 pretrain_gpt.py --save $EXP/ckpt/$DTYPE/tp2 --num-layers 2\n",
        memory=False,
    )
    text, reason = save_value(result)
    assert text is None and reason is not None and "`$EXP/ckpt/$DTYPE/tp2`" in reason
    assert [d.code for d in result.diagnostics if d.code in ("ML505", "ML509")] == []
