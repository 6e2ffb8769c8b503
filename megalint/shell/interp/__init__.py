"""The shell interpreter: what a script would set and run, without running anything.

The state is a set of concrete-ish paths, one per combination of undecided branches (an `if` on
an environment variable forks it). Values are `Segment` runs that remember where each character
came from; what cannot be known is an `Unknown` with a reason. Nothing is executed: command
substitutions are unknown except a few pure idioms (`$(dirname "$0")`, `$(echo …)`).

Paths share what they would work out alike (a script of 16 paths runs each statement 16 times):
an expansion is remembered with the values it read (`Evaluator.memo`), equal values are one object
(`Evaluator.shared`), and what is made from a value is kept by that object for the run: a value
shown at an expansion (splitting.shown_at), its words cut by one (fast_paths.scalar_word), where
each part of a command string was written and the words read from it again (reparse.py). Values
never change once made, so an object stands for its value wherever it is met. A "…" string made
again on each path (it reads one value that differs) is made of the segments its other parts gave
before (expansion._dq_scalar). A command string read again on each path (`eval $CMD`) is a script
of its own on each; its words are remembered by the parts they are made of
(`Evaluator.placed_memo`), a string that is one simple command is run from them without parsing
it (nested_scripts._simple_eval), and a string of a value's words (`eval ${CMD}`) is read word by
word, each word kept by its parts (nested_scripts._eval_words). An `if` chain of tests and
assignments runs once for each group of paths alike in what it reads, and what it did is done
again on the others (grouped.py).

Where each concern lives:

- core.py: `interpret` (the entry point), the `Evaluator` of one run, the dispatch from a
  statement's node type to its handler, the memo of expansions, what a run reports
- state.py: variables (`Var`), one path's `State`, the `Frame` being read, the limits (MAX_*)
- algebra.py: paths collapsed, merged past MAX_STATES, a child shell's effects, forgetting
- control.py: lists, subshells, pipelines, `&&`/`||`, `if`, `case`, loops, function definitions
- conditions.py: `[ … ]`, `[[ … ]]`, `test`, `(( ))` decided, and what an undecided test tells its path
- commands.py: simple commands, the builtins (a dispatch table), function calls, `export`/`declare`/`local`, `unset`
- nested_scripts.py: `source`/`.`, `eval`, `bash -c`, `sbatch <<EOF` here-document scripts
- reparse.py: a command string read again as shell, its `MappedSource` pointing back to where it was written
- assignments.py: `X=…`, `X+=…`, `A[i]=…`, `A=(…)`
- expansion.py: words and `"…"` strings, quoting and escapes, command substitution `$(…)`
- braces.py: brace expansion (`{a,b}`, `{1..3}`) of an unquoted word, before the other expansions
- splitting.py: word splitting, and where each field is shown
- parameters.py: `$X`, `$@`, `${X:-d}`, `${X#p}`, `${X/a/b}`, `${#X}`, `${A[@]}` and the other `${…}` forms
- patterns.py: glob matching (`case`, `[[ == ]]`, `${X#p}`, `${X/a/b}`)
- arithmetic.py: `$(( ))`, `(( ))`, `let`
- variables.py: reading a variable (set, an input, an argument), a variable as a command's environment
- fast_paths.py: shortcuts for the common shapes, checked against the general code by a test
- grouped.py: an `if` chain run once per group of paths alike in what it reads, replayed on the others
- pieces.py: what expanding a word yields before it is cut into fields
- syntax.py: questions about the tree that need no state
"""

from megalint.shell.interp.core import Evaluator, facts_from_states, interpret

__all__ = ["Evaluator", "facts_from_states", "interpret"]
