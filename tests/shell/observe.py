"""What a launch sees after evaluation, as plain tuples two evaluations can be compared on
(skipping vs evaluating everything, fast paths vs the general code)."""

from __future__ import annotations

import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURES = sorted(p for p in (ROOT / "fixtures").rglob("*.sh"))


def word(w):
    return (
        w.text,
        w.span,
        tuple(
            (s.text, s.site, s.origin, s.via, s.assumed, s.unknown.reason if s.unknown else None) for s in w.segments
        ),
        w.splat.reason if w.splat else None,
    )


def seen(facts):
    """The commands recorded (words, environment, prefix assignments) and the findings."""
    commands = set()
    for p in facts.paths:
        for c in p.commands:
            commands.add(
                (
                    tuple(word(w) for w in c.words),
                    c.span,
                    c.wrappers and repr(c.wrappers),
                    tuple(sorted((k, word(v)) for k, v in c.env.items())),
                    tuple(sorted((k, word(v)) for k, v in c.assigns.items())),
                    c.in_loop,
                )
            )
    findings = {(f.kind, f.span, f.message) for f in facts.findings}
    return commands, findings


def generator():
    """The speed benchmark's generator of launch scripts (bench/parse_bench.py)."""
    spec = importlib.util.spec_from_file_location("parse_bench", ROOT / "bench" / "parse_bench.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("parse_bench", mod)
    spec.loader.exec_module(mod)
    return mod


def write_generated(gen, root: pathlib.Path, seed: int) -> tuple[str, str]:
    """One generated script and the files it sources, written under root: (path, text)."""
    g = gen.generate(seed)
    d = root / f"s{seed}"
    d.mkdir()
    for name, text in g.extra_files.items():
        (d / name).write_text(text)
    path = d / g.name
    path.write_text(g.text)
    return str(path), g.text
