"""Finding the launches in the commands a script runs, and how many processes each starts.

Launchers: torchrun, `python -m torch.distributed.{run,launch}`, srun (with a per-node launcher
or one task per GPU), deepspeed, mpirun/mpiexec, MindSpore's msrun, plain python; also a launcher held in a
variable, since the evaluator has already split `$LAUNCHER` into words.
"""

from __future__ import annotations

import re
from collections.abc import Set

from megalint import lazy_re
from megalint.launch.launcher_options import (
    DEEPSPEED_VALUE,
    MPI_TWO_VALUES,
    MPI_VALUE,
    MSRUN_VALUE,
    PY_VALUE,
    SRUN_VALUE,
    TORCHRUN_VALUE,
)
from megalint.launch.model import Launch, Quantity, SchedulerHeader, entry_name
from megalint.launch.working_directory import through_working_directory
from megalint.shell.facts import CommandRecord, ScriptFacts
from megalint.shell.headers import gpus_per_node, header_value, node_count
from megalint.shell.values import Unknown, Word, default_name
from megalint.source import Span

ENTRY_RE = lazy_re.compile(
    r"(^|/)(pretrain_[A-Za-z0-9_]*\.py|posttrain_[A-Za-z0-9_]*\.py|finetune[A-Za-z0-9_]*\.py|train_rl\.py|"
    r"tasks/main\.py|main\.py)$"
)
# An entry point whose folder is unknown (`$MEGATRON/pretrain_gpt.py`) names Megatron only by a
# name no other project uses: a bare `…/main.py` could be anything.
_PARTIAL_ENTRY_RE = lazy_re.compile(
    r"/(pretrain_[A-Za-z0-9_]*\.py|posttrain_[A-Za-z0-9_]*\.py|finetune[A-Za-z0-9_]*\.py|train_rl\.py|tasks/main\.py)$"
)
MEGATRON_HINT_FLAGS = frozenset(
    {
        "--tensor-model-parallel-size",
        "--pipeline-model-parallel-size",
        "--num-layers",
        "--hidden-size",
        "--micro-batch-size",
        "--global-batch-size",
        "--num-attention-heads",
        "--seq-length",
        "--context-parallel-size",
        "--expert-model-parallel-size",
        "--train-iters",
    }
)

_PY = lazy_re.compile(r"^python(\d+(\.\d+)?)?$")
_WRAPPERS_NO_ARGS = {"nohup", "time", "exec", "command", "builtin"}


def _t(w: Word | None) -> str | None:
    return None if w is None else w.text


def _base(text: str | None) -> str | None:
    return None if text is None else text.rsplit("/", 1)[-1]


# A launcher's options: option -> its value (None for a switch or a missing value)
_Options = dict[str, Word | None]
# The same in the order written: (option, the word it is written in, its value)
_OptionOrder = list[tuple[str, Word, Word | None]]


def _options(
    words: list[Word], i: int, with_value: Set[str], two_values: Set[str] = frozenset()
) -> tuple[_Options, int, _OptionOrder]:
    """Read `--opt value`, `--opt=value` and switches from i; returns (opts, index after them)."""
    opts: _Options = {}
    order: _OptionOrder = []
    while i < len(words):
        w = words[i]
        t = w.text
        if t is None or not t.startswith("-") or t == "-":
            break
        if t == "--":
            i += 1
            break
        if "=" in t and t.startswith("--"):
            key, _ = t.split("=", 1)
            opts[key] = _value_part(w, len(key) + 1)
            order.append((key, w, opts[key]))
            i += 1
            continue
        if t in with_value:
            val = words[i + 1] if i + 1 < len(words) else None
            if t in two_values:
                val = words[i + 2] if i + 2 < len(words) else None
                i += 1
            opts[t] = val
            order.append((t, w, val))
            i += 2
            continue
        # `-N2` / `-n8` short forms
        m = re.fullmatch(r"(-[A-Za-z])(\d+)", t)
        if m and m.group(1) in with_value:
            opts[m.group(1)] = _value_part(w, 2)
            order.append((m.group(1), w, opts[m.group(1)]))
            i += 1
            continue
        opts[t] = None
        order.append((t, w, None))
        i += 1
    return opts, i, order


def _value_part(word: Word, start: int) -> Word:
    """The part of `--opt=value` after the `=`, keeping the sites of its characters."""
    from megalint.shell.values import Segment

    out: list[Segment] = []
    pos = 0
    for seg in word.segments:
        if seg.text is None:
            if pos >= start:
                out.append(seg)
            pos += 1
            continue
        n = len(seg.text)
        if pos + n <= start:
            pos += n
            continue
        cut = max(0, start - pos)
        site = seg.site
        if cut and site is not None and site.end - site.start == n and site.start_line == site.end_line:
            from megalint.source import Span

            site = Span(
                site.path,
                site.start_line,
                site.start_col + cut,
                site.end_line,
                site.end_col,
                site.start + cut,
                site.end,
            )
        out.append(Segment(seg.text[cut:], site, seg.origin, seg.unknown, seg.via, seg.assumed))
        pos += n
    return Word(tuple(out))


# Counts processes under torchrun and nodes on some platforms (PAI-DLC): as the default of a node
# count, which the platform means is not known.
_AMBIGUOUS_COUNTS = frozenset({"WORLD_SIZE"})


def _int_quantity(word: Word | None, how: str, default: int | None = None, *, nodes: bool = False) -> Quantity:
    if word is None:
        if default is None:
            return Quantity(None, how, (), Unknown(f"{how} is not given"))
        return Quantity(default, f"default of {how}")
    t = word.text
    if t is None:
        return Quantity(None, how, (word,), word.unknown)
    # A default of an input (`--nnodes ${NNODES:-2}`) is the author's intent: used, and assumed.
    ambiguous = [n for n in map(default_name, word.defaults_assumed) if n in _AMBIGUOUS_COUNTS]
    if nodes and ambiguous:
        reason = (
            f"{how} is {t} only through the default of {ambiguous[0]}, which counts processes under torchrun "
            "and nodes on some platforms: the job's environment sets it"
        )
        return Quantity(None, how, (word,), Unknown(reason, word.span))
    m = re.fullmatch(r"\s*(\d+)\s*", t)
    if m:
        return Quantity(int(m.group(1)), how, (word,), assumed=word.defaults_assumed)
    m = re.fullmatch(r"(\d+):(\d+)", t)
    if m and m.group(1) == m.group(2):
        return Quantity(int(m.group(1)), how, (word,), assumed=word.defaults_assumed)
    return Quantity(None, how, (word,), Unknown(f"{how} is `{t}`, not a fixed number", word.span))


def _header_quantity(headers: list[SchedulerHeader], what: str) -> Quantity | None:
    from megalint.shell.values import Segment

    if what == "nodes":
        got = node_count(headers)
        if got is None:
            return None
        n, h = got
        return Quantity(
            n, f"#{'SBATCH' if h.scheduler == 'slurm' else 'PBS'} {h.key}", (Word((Segment(h.value, h.span),)),)
        )
    if what == "gpus":
        got = gpus_per_node(headers)
        if got is None:
            return None
        n, h = got
        return Quantity(n, f"#SBATCH {h.key}", (Word((Segment(h.value, h.span),)),))
    if what == "ntasks-per-node":
        given = header_value(headers, "--ntasks-per-node")
        if given is None or not given.value.isdigit():
            return None
        return Quantity(int(given.value), "#SBATCH --ntasks-per-node", (Word((Segment(given.value, given.span),)),))
    if what == "ntasks":
        given = header_value(headers, "--ntasks")
        if given is None or not given.value.isdigit():
            return None
        return Quantity(int(given.value), "#SBATCH --ntasks", (Word((Segment(given.value, given.span),)),))
    return None


def _times(a: Quantity, b: Quantity, how: str) -> Quantity:
    if a.value is not None and b.value is not None:
        return Quantity(a.value * b.value, how, a.words + b.words, assumed=_union(a.assumed, b.assumed))
    unknown = a.unknown if a.value is None else b.unknown
    return Quantity(None, how, a.words + b.words, unknown or Unknown(f"{how} is not known"))


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return a + tuple(x for x in b if x not in a)


def _strip_wrappers(words: list[Word], i: int) -> int:
    while i < len(words):
        t = _base(_t(words[i]))
        if t in _WRAPPERS_NO_ARGS:
            i += 1
        elif t == "env":
            i += 1
            while i < len(words) and ((_t(words[i]) or "").startswith("-") or "=" in (_t(words[i]) or "")):
                i += 1
        elif t == "timeout":
            i += 1
            while i < len(words) and (_t(words[i]) or "").startswith("-"):
                i += 1
            i += 1
        elif t in ("uv", "poetry", "pipenv", "pixi") and i + 1 < len(words) and _t(words[i + 1]) == "run":
            i += 2
            while i < len(words) and (_t(words[i]) or "").startswith("-"):
                i += 1
        elif t == "conda" and i + 1 < len(words) and _t(words[i + 1]) == "run":
            i += 2
            opts, i, _ = _options(words, i, {"-n", "--name", "-p", "--prefix"})
        elif t in ("numactl", "taskset", "stdbuf", "nice"):
            i += 1
            while i < len(words) and (_t(words[i]) or "").startswith("-"):
                i += 1
            if t == "taskset":
                i += 1
        elif t in ("singularity", "apptainer") and i + 1 < len(words) and _t(words[i + 1]) in ("exec", "run"):
            i += 2
            opts, i, _ = _options(
                words, i, {"-B", "--bind", "--env", "--home", "-H", "--pwd", "-W", "--workdir", "--overlay"}
            )
            i += 1  # the image
        else:
            return i
    return i


class _Found:
    def __init__(self) -> None:
        self.launcher: str | None = None
        self.entry: Word | None = None
        self.entry_index: int | None = None  # set with entry
        self.nproc: Quantity | None = None
        self.nnodes: Quantity | None = None
        self.world: Quantity | None = None
        self.launcher_words: list[Word] = []
        self.notes: list[str] = []


def _python_entry(words: list[Word], i: int, found: _Found) -> bool:
    """`python [opts] script.py …` or `python -m module …` starting at i."""
    j = i + 1
    while j < len(words):
        t = _t(words[j])
        if t is None:
            # `python $MEGATRON/pretrain_gpt.py`: a script whose folder only is unknown.
            if entry_name(words[j]) is None:
                return False
            found.entry = words[j]
            found.entry_index = j
            return True
        if t == "-m" and j + 1 < len(words):
            mod = _t(words[j + 1])
            if mod in ("torch.distributed.run", "torch.distributed.launch"):
                found.launcher = mod
                return _torchrun(words, j + 2, found, words[i : j + 2])
            found.entry = words[j + 1]
            found.entry_index = j + 1
            return True
        if t in PY_VALUE:
            j += 2
            continue
        if t.startswith("-"):
            j += 1
            continue
        found.entry = words[j]
        found.entry_index = j
        return True
    return False


def _torchrun(words: list[Word], i: int, found: _Found, head: list[Word]) -> bool:
    opts, j, order = _options(words, i, TORCHRUN_VALUE)
    found.launcher_words = list(head) + words[i:j]
    nproc_w = opts.get("--nproc_per_node", opts.get("--nproc-per-node"))
    if nproc_w is not None and _t(nproc_w) in ("gpu", "auto"):
        found.nproc = Quantity(
            None,
            "torchrun --nproc-per-node",
            (nproc_w,),
            Unknown(f"--nproc-per-node {_t(nproc_w)} uses every GPU of the node", nproc_w.span),
        )
    else:
        found.nproc = _int_quantity(nproc_w, "torchrun --nproc-per-node", 1)
    if "--standalone" in opts:
        found.nnodes = Quantity(1, "torchrun --standalone")
    else:
        found.nnodes = _int_quantity(opts.get("--nnodes"), "torchrun --nnodes", 1, nodes=True)
    if "--no_python" in opts or "--no-python" in opts:
        pass
    if j < len(words):
        t = _t(words[j])
        if t is not None and _PY.match(_base(t) or ""):
            return _python_entry(words, j, found) or True
        if "-m" in opts or "--module" in opts:
            found.entry = words[j]
            found.entry_index = j
            return True
        k = _entry_after_unknown(words, j)
        if k is not None:
            # `torchrun $DISTRIBUTED_ARGS pretrain_x.py`: the unknown words are launcher options
            # (any of them may set the process count), and the script is the named file.
            unknown = words[j].unknown or Unknown("the launcher's options are not known", words[j].span)
            if nproc_w is None:
                found.nproc = Quantity(None, "torchrun --nproc-per-node", (words[j],), unknown)
            if "--nnodes" not in opts and "--standalone" not in opts:
                found.nnodes = Quantity(None, "torchrun --nnodes", (words[j],), unknown)
            found.launcher_words = list(head) + words[i:k]
            j = k
        found.entry = words[j]
        found.entry_index = j
    return True


def _entry_after_unknown(words: list[Word], j: int) -> int | None:
    """The index of the script after unknown words at `j`, or None when `words[j]` is known.

    Only unknown words and options may stand between: the first known plain word is the
    entry point (or not one megalint can name)."""
    if _t(words[j]) is not None:
        return None
    for k in range(j + 1, len(words)):
        t = _t(words[k])
        if t is None and _partial_entry(words[k]):
            return k
        if t is None or t.startswith("-"):
            continue
        return k if ENTRY_RE.search(t) or t.endswith(".py") else None
    return None


def _partial_entry(word: Word) -> bool:
    """`$MEGATRON/pretrain_gpt.py`: a Megatron entry point in a folder that is not known."""
    partial = entry_name(word) if word.text is None else None
    return partial is not None and bool(_PARTIAL_ENTRY_RE.search(partial))


def _deepspeed(words: list[Word], i: int, found: _Found) -> bool:
    opts, j, _ = _options(words, i + 1, DEEPSPEED_VALUE)
    found.launcher = "deepspeed"
    found.launcher_words = words[i:j]
    g = opts.get("--num_gpus", opts.get("--num-gpus"))
    found.nproc = (
        _int_quantity(g, "deepspeed --num_gpus")
        if g is not None
        else Quantity(None, "deepspeed", (), Unknown("deepspeed without --num_gpus uses every GPU of the node"))
    )
    n = opts.get("--num_nodes", opts.get("--num-nodes"))
    if n is not None:
        found.nnodes = _int_quantity(n, "deepspeed --num_nodes", nodes=True)
    elif "--hostfile" in opts or "-H" in opts:
        found.nnodes = Quantity(None, "deepspeed --hostfile", (), Unknown("the nodes are listed in a hostfile"))
    else:
        found.nnodes = Quantity(
            None, "deepspeed", (), Unknown("deepspeed takes its nodes from /job/hostfile when it exists")
        )
    if j < len(words):
        found.entry = words[j]
        found.entry_index = j
    return True


def _mpirun(words: list[Word], i: int, found: _Found, headers: list[SchedulerHeader]) -> bool:
    opts, j, _ = _options(words, i + 1, MPI_VALUE, MPI_TWO_VALUES)
    found.launcher = _base(_t(words[i]))
    found.launcher_words = words[i:j]
    np_w = opts.get("-np", opts.get("-n", opts.get("--np")))
    ppn = opts.get("-npernode", opts.get("--npernode", opts.get("-N", opts.get("-ppn", opts.get("--ppn")))))
    mapby = opts.get("--map-by", opts.get("-map-by"))
    if ppn is None and mapby is not None and mapby.text:
        m = re.match(r"ppr:(\d+):node", mapby.text)
        if m:
            ppn = mapby
            found.nproc = Quantity(int(m.group(1)), "mpirun --map-by ppr", (mapby,))
    if found.nproc is None:
        found.nproc = (
            _int_quantity(ppn, "mpirun processes per node")
            if ppn is not None
            else Quantity(None, "mpirun", (), Unknown("mpirun places processes by its hostfile or scheduler"))
        )
    if np_w is not None:
        found.world = _int_quantity(np_w, "mpirun -np")
    rest = j
    if rest < len(words):
        t = _base(_t(words[rest]))
        if t and _PY.match(t):
            _python_entry(words, rest, found)
        elif t == "torchrun":
            found.launcher = "torchrun"
            _torchrun(words, rest + 1, found, words[rest : rest + 1])
        else:
            found.entry = words[rest]
            found.entry_index = rest
    return True


def _msrun(words: list[Word], i: int, found: _Found) -> None:
    """MindSpore's msrun: `--worker_num` processes in all, `--local_worker_num` on this node
    (both 8 when not given), then the script it runs with python."""
    opts, j, _ = _options(words, i + 1, MSRUN_VALUE)
    found.launcher = "msrun"
    found.launcher_words = words[i:j]
    found.nproc = _int_quantity(opts.get("--local_worker_num"), "msrun --local_worker_num", 8)
    found.world = _int_quantity(opts.get("--worker_num"), "msrun --worker_num", 8)
    world, per_node = found.world.value, found.nproc.value
    if world is not None and per_node and world % per_node == 0:
        found.nnodes = Quantity(world // per_node, "msrun --worker_num / --local_worker_num")
    else:
        found.nnodes = Quantity(None, "msrun", (), Unknown("msrun's node count is --worker_num / --local_worker_num"))
    k = next((k for k in range(j, len(words)) if (words[k].text or "").endswith(".py")), j)
    if k != j and k < len(words):
        # A value split into words (an unquoted "your master IP Address") ends the options early:
        # msrun would run `master` as its script; the counts it was given are not known.
        stray = words[j].partial_text
        why = Unknown(f"msrun's options end early: `{stray}` stands where its script should", words[j].span)
        found.nproc = Quantity(None, "msrun --local_worker_num", (words[j],), why)
        found.world = Quantity(None, "msrun --worker_num", (words[j],), why)
        found.nnodes = Quantity(None, "msrun", (words[j],), why)
    if k < len(words):
        found.entry, found.entry_index = words[k], k


def _srun_context(
    wrapper: list[Word], headers: list[SchedulerHeader]
) -> tuple[Quantity, Quantity | None, Quantity | None, int]:
    """What an srun (outer command or wrapper) says about nodes and tasks."""
    opts, j, _ = _options(wrapper, 1, SRUN_VALUE)
    nodes_w = opts.get("-N", opts.get("--nodes"))
    nodes = (
        _int_quantity(nodes_w, "srun --nodes", nodes=True)
        if nodes_w is not None
        else (
            _header_quantity(headers, "nodes")
            or Quantity(None, "srun", (), Unknown("the number of nodes of the allocation"))
        )
    )
    tpn_w = opts.get("--ntasks-per-node")
    tpn = (
        _int_quantity(tpn_w, "srun --ntasks-per-node")
        if tpn_w is not None
        else _header_quantity(headers, "ntasks-per-node")
    )
    nt_w = opts.get("-n", opts.get("--ntasks"))
    ntasks = _int_quantity(nt_w, "srun --ntasks") if nt_w is not None else _header_quantity(headers, "ntasks")
    return nodes, tpn, ntasks, j


def find_launch(rec: CommandRecord, headers: list[SchedulerHeader]) -> Launch | None:
    words = list(rec.words)
    found = _Found()
    srun_words: list[Word] | None = None
    for wrapper in rec.wrappers:
        w0 = _base(_t(wrapper[0])) if wrapper else None
        if w0 == "srun":
            srun_words = list(wrapper)
    i = _strip_wrappers(words, 0)
    if i < len(words) and _base(_t(words[i])) == "srun":
        _, j, _ = _options(words, i + 1, SRUN_VALUE)
        srun_words = words[i:j]
        i = _strip_wrappers(words, j)
    if i >= len(words):
        return None
    head = _base(_t(words[i]))
    if head == "torchrun":
        found.launcher = "torchrun"
        _torchrun(words, i + 1, found, words[i : i + 1])
    elif head is not None and _PY.match(head):
        if not _python_entry(words, i, found):
            return None
        if found.launcher is None:
            found.launcher = "python"
    elif head == "deepspeed":
        _deepspeed(words, i, found)
    elif head in ("mpirun", "mpiexec"):
        _mpirun(words, i, found, headers)
    elif head == "msrun":
        _msrun(words, i, found)
    elif head == "accelerate" and i + 1 < len(words) and _t(words[i + 1]) == "launch":
        found.launcher = "accelerate"
        opts, j, _ = _options(
            words,
            i + 2,
            {
                "--num_processes",
                "--num_machines",
                "--config_file",
                "--main_process_port",
                "--main_process_ip",
                "--machine_rank",
                "--mixed_precision",
            },
        )
        found.nproc = Quantity(None, "accelerate", (), Unknown("accelerate takes its process count from its config"))
        found.nnodes = _int_quantity(opts.get("--num_machines"), "accelerate --num_machines", 1, nodes=True)
        if j < len(words):
            found.entry, found.entry_index = words[j], j
    else:
        # A launcher we cannot read (unknown `$LAUNCHER`, msrun …): still find the entry point.
        for k in range(i, len(words)):
            t = _t(words[k])
            if (t is not None and ENTRY_RE.search(t)) or (k > i and _partial_entry(words[k])):
                found.launcher = head if head else "unknown"
                found.entry, found.entry_index = words[k], k
                found.notes.append(
                    f"the launcher `{words[i].partial_text}` is not one megalint reads; the world size is unknown"
                )
                found.nproc = Quantity(
                    None, "launcher", (words[i],), words[i].unknown or Unknown("an unknown launcher")
                )
                found.nnodes = Quantity(
                    None, "launcher", (words[i],), words[i].unknown or Unknown("an unknown launcher")
                )
                break
        else:
            return None
    if found.entry is None:
        return None
    # Every reader that finds the entry point sets its index and names the launcher with it.
    assert found.entry_index is not None and found.launcher is not None
    entry_text = _t(found.entry)
    argv = tuple(words[found.entry_index + 1 :])
    is_megatron = bool(ENTRY_RE.search(entry_text)) if entry_text is not None else _partial_entry(found.entry)
    if not is_megatron:
        # Forks such as epfLLM's spell the same flags with underscores (`--num_layers`).
        flags = {w.text.split("=", 1)[0].replace("_", "-") for w in argv if w.text and w.text.startswith("--")}
        is_megatron = len(flags & MEGATRON_HINT_FLAGS) >= 2
    if not is_megatron:
        return None
    env = dict(rec.env)
    env.update(rec.assigns)
    nproc, nnodes, world = _world(found, srun_words, headers, env)
    return Launch(
        launcher=("srun+" + found.launcher) if srun_words is not None else found.launcher,
        command=tuple(words),
        entry=found.entry,
        argv=argv,
        env=env,
        nproc_per_node=nproc,
        nnodes=nnodes,
        world_size=world,
        span=rec.span,
        condition=rec.condition,
        launcher_words=tuple((srun_words or []) + list(found.launcher_words)),
        notes=found.notes,
    )


def _world(
    found: _Found, srun_words: list[Word] | None, headers: list[SchedulerHeader], env: dict[str, Word]
) -> tuple[Quantity, Quantity, Quantity]:
    per_node_launcher = found.launcher in (
        "torchrun",
        "torch.distributed.run",
        "torch.distributed.launch",
        "deepspeed",
        "accelerate",
    )
    if srun_words is not None:
        nodes, tpn, ntasks, _ = _srun_context(srun_words, headers)
        if per_node_launcher:
            # srun starts one launcher per node (the bigscience idiom); the launcher's own
            # --nnodes is usually `$SLURM_NNODES`, so prefer it when known.
            nnodes = (
                found.nnodes
                if found.nnodes is not None
                and found.nnodes.known
                and "default" not in found.nnodes.how
                and not (found.nnodes.assumed and nodes.known)
                else nodes
            )
            nproc = found.nproc
            assert nproc is not None  # each per-node launcher's reader sets its process count
            return nproc, nnodes, _times(nproc, nnodes, "processes per node × nodes")
        # One task per GPU: the world is the number of tasks.
        if ntasks is not None and ntasks.known:
            per = tpn or (Quantity(None, "srun", (), Unknown("tasks per node")))
            return per, nodes, ntasks
        if tpn is not None:
            return tpn, nodes, _times(tpn, nodes, "tasks per node × nodes")
        return (
            Quantity(None, "srun", (), Unknown("srun's tasks per node are not given")),
            nodes,
            Quantity(None, "srun", (), Unknown("srun's task count is not given")),
        )
    if found.launcher == "python":
        one = Quantity(1, "a single python process")
        if "WORLD_SIZE" in env:
            # Megatron takes the world size from WORLD_SIZE (`WORLD_SIZE=$TP python tools/…`).
            return one, one, _int_quantity(env["WORLD_SIZE"], "WORLD_SIZE")
        return one, one, one
    if found.world is not None:
        nnodes = found.nnodes or _header_quantity(headers, "nodes") or Quantity(None, "launcher", (), Unknown("nodes"))
        return found.nproc or Quantity(None, "launcher"), nnodes, found.world
    nproc = found.nproc or Quantity(None, "launcher", (), Unknown("processes per node"))
    nnodes = found.nnodes or Quantity(None, "launcher", (), Unknown("nodes"))
    if found.launcher in ("mpirun", "mpiexec") and nnodes.value is None:
        hq = _header_quantity(headers, "nodes")
        if hq is not None:
            nnodes = hq
    return nproc, nnodes, _times(nproc, nnodes, "processes per node × nodes")


def _placed_at(word: Word) -> str:
    """`str(word.span)`: where the word begins, without making its span."""
    for seg in word.segments:
        site = seg.site
        if site is not None:
            return f"{site.path}:{site.start_line}:{site.start_col}"
    return str(word.span)


def extract_launches(facts: ScriptFacts) -> list[Launch]:
    """Every Megatron launch on every path; the same launch with the same words counts once."""
    launches: list[Launch] = []
    seen_records: set[int] = set()
    seen: set[tuple[Span, tuple[tuple[str, str], ...], int | None]] = set()
    # Each word's text and where it begins, by the word: the launches of a script's paths share
    # most of their words (the same objects), and each place is worked out from the file's line table.
    told: dict[int, tuple[Word, tuple[str, str]]] = {}

    def told_by(w: Word) -> tuple[str, str]:
        held = told.get(id(w))
        if held is None or held[0] is not w:
            held = told[id(w)] = (w, (w.partial_text, _placed_at(w)))
        return held[1]

    for path in facts.paths:
        for rec in path.commands:
            if id(rec) in seen_records:
                continue
            seen_records.add(id(rec))
            launch = find_launch(rec, list(rec.headers) or facts.headers)
            if launch is None:
                continue
            key = (launch.span, tuple(map(told_by, launch.command)), launch.world_size.value)
            if key in seen:
                continue
            seen.add(key)
            if through_working_directory(launch.entry, facts):
                launch.entry_through_working_directory = True
                launch.notes.append(
                    "the entry point's folder comes from `pwd`, read as the script's folder (the job is "
                    "started from there): its arguments are bound as those of a script megalint cannot name"
                )
            launches.append(launch)
    return launches
