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
# `NAME=`, `NAME+=`, `NAME[i]=` anywhere, comments and strings included (`# DATA=/path bash x.sh`).
_GIVES = lazy_re.compile(rf"(?<![\w$])({_NAME})(?:\[[^\]\n]*\])?\+?=")
# `${NAME:-…}`, `${NAME-…}`, `${NAME:?…}`, `${NAME:=…}`, `${NAME:+…}`: read knowing it may be unset.
_GUARDS = lazy_re.compile(rf"\$\{{({_NAME}):?[-?=+]")
# `[ -z "$NAME" ]`, `[[ -n ${NAME} ]]`, `[[ -v NAME ]]`
_TESTS = lazy_re.compile(rf"-[znv]\s+\"?\$?\{{?({_NAME})")
# The commands that give a name a value or a declaration without `=`, and `for NAME`.
_DECLARES = lazy_re.compile(
    r"(?:^|[\s;&|(`])(?:export|declare|local|readonly|typeset|read|getopts|mapfile|readarray|unset|printf\s+-v|for)"
    r"\s([^\n;|&#)]*)"
)
# An assignment that starts a statement: where a name is given its value, for "did you mean".
_ASSIGNMENT = lazy_re.compile(rf"^[ \t]*(?:(?:export|local|readonly|declare(?:[ \t]+-\w+)*)[ \t]+)?({_NAME})\+?=", re.M)
_READS = lazy_re.compile(rf"\$\{{?({_NAME})")
# A name computed at run time given a value: `export "$KEY"="$VALUE"`, `declare "$k=…"`,
# `printf -v "$out"`, `read -r "$var"`, `eval "$k=$v"`.
_DYNAMIC = lazy_re.compile(
    r"(?:^|[\s;&|(`])(?:(?:export|declare|local|readonly|typeset)(?:\s+-\w+)*|printf\s+-v|read(?:\s+-\w+)*)"
    r"\s+\"?\$"
    r"|\beval\b[^\n]*\$\{?\w+\}?\\?\"?\+?=",
    re.M,
)


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
        dynamic = dynamic or _DYNAMIC.search(text) is not None
        meant.update(m.group(1) for m in _GIVES.finditer(text))
        meant.update(m.group(1) for m in _GUARDS.finditer(text))
        meant.update(m.group(1) for m in _TESTS.finditer(text))
        for m in _DECLARES.finditer(text):
            meant.update(re.findall(_NAME, m.group(1)))
        read.update(m.group(1) for m in _READS.finditer(text))
        for m in _ASSIGNMENT.finditer(text):
            assigned.setdefault(m.group(1), Assigned(src.path, src.position(m.start(1))[0]))
    return NameFacts(frozenset(meant), assigned, frozenset(read), dynamic)
