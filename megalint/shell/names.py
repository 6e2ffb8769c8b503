"""Which variable names a script gives a value to, tests or expects, read from the text of the
script and of every file it sourced; and the names the shell, a scheduler or a launcher provide.

A variable that is read and never set is an input from the environment. Whether that input is
meant is a question of the whole text: a name the script assigns anywhere (even in a comment
such as `# run as DATA=/path bash train.sh`), reads with a default or a check (`${X:-…}`,
`${X:?…}`, `[ -z "$X" ]`), exports, declares, reads with `read` or loops over is meant; so is a
name the shell, the scheduler or the launcher sets. These readings are deliberately wide: a name
they miss is reported, and a report on a script that works costs more than a missed one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from megalint import lazy_re
from megalint.source import SourceFile

# The shell's own variables and the usual environment of a login (bash(1), "Shell Variables").
SHELL_PROVIDED = frozenset(
    """HOME PWD OLDPWD USER LOGNAME USERNAME HOSTNAME HOST SHELL PATH TERM LANG LC_ALL TZ TMPDIR
    RANDOM SRANDOM SECONDS LINENO UID EUID PPID GROUPS HOSTTYPE OSTYPE MACHTYPE SHLVL IFS OPTARG
    OPTIND OPTERR REPLY PIPESTATUS FUNCNAME DIRSTACK EPOCHSECONDS EPOCHREALTIME DISPLAY EDITOR MAIL
    LD_LIBRARY_PATH LIBRARY_PATH CPATH PYTHONPATH PYTHONHOME CONDA_PREFIX CONDA_DEFAULT_ENV
    VIRTUAL_ENV CUDA_HOME CUDA_PATH CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES ASCEND_HOME_PATH
    ASCEND_TOOLKIT_HOME ASCEND_RT_VISIBLE_DEVICES HF_HOME TRANSFORMERS_CACHE XDG_CACHE_HOME""".split()
)
# What a scheduler, a launcher, a container runtime or a training platform sets in a job.
LAUNCHER_PROVIDED = frozenset(
    """RANK LOCAL_RANK WORLD_SIZE LOCAL_WORLD_SIZE GROUP_RANK GROUP_WORLD_SIZE ROLE_RANK ROLE_NAME
    ROLE_WORLD_SIZE MASTER_ADDR MASTER_PORT NODE_RANK NNODES NPROC_PER_NODE NODE_COUNT NUM_NODES
    JOB_ID JOB_NAME NHOSTS NSLOTS HOSTFILE KUBERNETES_SERVICE_HOST POD_NAME""".split()
)
PROVIDED_PREFIXES = (
    "SLURM_",
    "SBATCH_",
    "SRUN_",
    "PBS_",
    "LSB_",
    "LSF_",
    "COBALT_",
    "FLUX_",
    "SGE_",
    "PALS_",
    "ALPS_",
    "OAR_",
    "OMPI_",
    "PMI_",
    "PMIX_",
    "MV2_",
    "MPI_",
    "I_MPI_",
    "TORCHELASTIC_",
    "PET_",
    "MLP_",
    "AZ_BATCH",
    "AZUREML_",
    "DLTS_",
    "PADDLE_",
    "VC_",
    "KUBERNETES_",
    "BASH",
    "CI_",
    "GITHUB_",
)


def provided(name: str) -> bool:
    """Whether the shell, a scheduler or a launcher sets `name` in a job."""
    return name in SHELL_PROVIDED or name in LAUNCHER_PROVIDED or name.startswith(PROVIDED_PREFIXES)


_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
# `NAME=`, `NAME+=`, `NAME[i]=` anywhere, comments and strings included (`# DATA=/path bash x.sh`):
# `(?<![\w$])(NAME)(?:\[[^\]\n]*\])?\+?=`, matched on the text reversed (the name reversed), where
# each match starts with its `=`, a character the engine finds quickly (ten times faster).
_GIVES_REVERSED = lazy_re.compile(r"=\+?(?:\][^\]\n]*\[)?([A-Za-z0-9_]*[A-Za-z_])(?![\w$])")
# `${NAME:-…}`, `${NAME-…}`, `${NAME:?…}`, `${NAME:=…}`, `${NAME:+…}`: read knowing it may be unset.
_GUARDS = lazy_re.compile(rf"\$\{{({_NAME}):?[-?=+]")
# `[ -z "$NAME" ]`, `[[ -n ${NAME} ]]`, `[[ -v NAME ]]`
_TESTS = lazy_re.compile(rf"-[znv]\s+\"?\$?\{{?({_NAME})")


def _after_delimiter(keyword: str) -> str:
    """`keyword` at the start of the text or after a blank, `;`, `&`, `|`, `(` or a backquote:
    the test comes after the keyword, so that each pattern starts with its text, which the
    engine finds quickly (a pattern starting with a choice is tried at every character)."""
    return rf"{keyword}(?<![^\s;&|(`]{keyword})"


# The commands that give a name a value or a declaration without `=`, and `for NAME`: one
# pattern a command, its group the words after it. `_declared` finds with them what one pattern
# `(?:^|[\s;&|(`])(?:export|declare|…|for)\s([^\n;|&#)]*)` finds.
_DECLARES = tuple(
    (command, lazy_re.compile(_after_delimiter(command) + rest + r"\s([^\n;|&#)]*)"))
    for command, rest in (
        *((c, "") for c in "export declare local readonly typeset read getopts mapfile readarray unset".split()),
        ("printf", r"\s+-v"),
        ("for", ""),
    )
)
# An assignment that starts a statement: where a name is given its value, for "did you mean".
_ASSIGNMENT = lazy_re.compile(rf"^[ \t]*(?:(?:export|local|readonly|declare(?:[ \t]+-\w+)*)[ \t]+)?({_NAME})\+?=", re.M)
_READS = lazy_re.compile(rf"\$\{{?({_NAME})")
# A name computed at run time given a value: `export "$KEY"="$VALUE"`, `declare "$k=…"`,
# `printf -v "$out"`, `read -r "$var"`, `eval "$k=$v"`. Any of these patterns found is one.
_DYNAMIC = (
    *(
        (command, lazy_re.compile(_after_delimiter(command) + rest + r"\s+\"?\$"))
        for command, rest in (
            *((c, r"(?:\s+-\w+)*") for c in "export declare local readonly typeset".split()),
            ("printf", r"\s+-v"),
            ("read", r"(?:\s+-\w+)*"),
        )
    ),
    ("eval", lazy_re.compile(r"eval(?<=\beval)\b[^\n]*\$\{?\w+\}?\\?\"?\+?=")),
)
# Each pattern above starts with its command's name: one whose name the text does not hold is
# neither compiled nor run (most scripts hold a few of them; a short one, none).


@dataclass(frozen=True)
class Assigned:
    """Where the script first gives a name its value: a file and a 1-based line."""

    path: str
    line: int


@dataclass(frozen=True)
class NameFacts:
    """The names the text of a script and its sourced files set, test or declare (`meant`), the
    statements that assign each (`assigned`, first one), the names it reads (`read`), and whether
    it sets names it computes (`dynamic`)."""

    meant: frozenset[str]
    assigned: dict[str, Assigned]
    read: frozenset[str]
    dynamic: bool  # the text gives a value to a name it computes: any name may be set

    def is_meant(self, name: str) -> bool:
        return name in self.meant or provided(name)


def script_names(sources: Iterable[SourceFile]) -> NameFacts:
    meant: set[str] = set()
    assigned: dict[str, Assigned] = {}
    read: set[str] = set()
    dynamic = False
    for src in sources:
        text = src.text
        dynamic = dynamic or any(name in text and p.search(text) is not None for name, p in _DYNAMIC)
        meant.update(name[::-1] for name in _GIVES_REVERSED.findall(text[::-1]))
        meant.update(m.group(1) for m in _GUARDS.finditer(text))
        meant.update(m.group(1) for m in _TESTS.finditer(text))
        for declared in _declared(text):
            meant.update(re.findall(_NAME, declared))
        read.update(m.group(1) for m in _READS.finditer(text))
        for m in _ASSIGNMENT.finditer(text):
            assigned.setdefault(m.group(1), Assigned(src.path, src.position(m.start(1))[0]))
    return NameFacts(frozenset(meant), assigned, frozenset(read), dynamic)


def _declared(text: str) -> list[str]:
    """The words after each declaring command (`_DECLARES`), found as one pattern of them all
    finds them: from the start, the command met first, then from where its words end."""
    found: list[str] = []
    pos = 0
    # Each pattern's first match from `pos`, found again once `pos` passes its start; a pattern
    # with none is left out.
    ahead = {pattern: pattern.search(text) for name, pattern in _DECLARES if name in text}
    while True:
        first: re.Match[str] | None = None
        for pattern, m in list(ahead.items()):
            if m is not None and m.start() < pos:
                m = ahead[pattern] = pattern.search(text, pos)
            if m is None:
                del ahead[pattern]
            # Two commands never match at one place: each is followed by a blank.
            elif first is None or m.start() < first.start():
                first = m
        if first is None:
            return found
        found.append(first.group(1))
        pos = first.end()
