#!/usr/bin/env python3
"""Greedy generation with a Llama-3.2-1B-shaped model, float and quantized with lowbit.

The whole model (16 decoder blocks with RMSNorm, rotary positions, grouped-query attention and a
KV cache; embedding and tied LM head; random weights, examples/llama.py) generates greedily: a
128-token prompt in one forward pass, then 64 tokens (the prompt's pass gives the first, one
decode step each the others). The lowbit copy comes from `lowbit.torch.quantize_` (4-bit weights
in groups of 32, int8 activations, every nn.Linear including the head; the embedding stays
float). float and lowbit run at 1 and at all threads (torch.set_num_threads; OpenBLAS's
threads too for float, one for lowbit: examples/llama.py set_threads), lowbit also with a pause
between tokens (an application doing something else: its workers go to sleep); whole
generations of each, interleaved rep by rep. It prints prompt tokens/s, generated tokens/s, peak
resident memory (each model alone, in a child process) and how well lowbit's greedy tokens agree
with float's; and, interleaved with them, the time of lowbit's linear layers alone per decode
step at each thread count (how the part of a step that reads the weights scales, against the
whole step), and (`lowbit bench --widths` in its own process, once per rep) how fast this
machine's memory reads at 1 and at all threads.

    PYTHONPATH=build/python /usr/bin/python3 examples/torch_generate.py [--model llama3.2-1b]
        [--threads T] [--prompt 128] [--generate 64] [--pause-ms 5] [--reps 5]
"""
import argparse
import copy
import ctypes
import gc
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

import torch

import lowbit.torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import LOWBIT_BLAS_THREADS, MODELS, Llama, set_threads  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=MODELS, default="llama3.2-1b")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="the 'all threads' count")
    ap.add_argument("--prompt", type=int, default=128, help="prompt tokens")
    ap.add_argument("--generate", type=int, default=64, help="generated tokens")
    ap.add_argument("--pause-ms", type=float, default=5.0, help="lowbit's pause between tokens (0: no such rows)")
    ap.add_argument("--reps", type=int, default=5, help="generations of each contender, interleaved")
    ap.add_argument("--prompt-reps", type=int, default=3, help="prompt passes per generation (timed)")
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--group", type=int, default=32)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory child processes")
    ap.add_argument("--no-probe", action="store_true",
                    help="skip the memory's own 1-to-T-thread read rate (lowbit bench --widths, once per rep)")
    ap.add_argument("--memory-of", choices=("float", "lowbit"), help=argparse.SUPPRESS)  # the child's job
    args = ap.parse_args()
    if args.threads < 1 or args.prompt < 1 or args.generate < 1 or args.reps < 1 or args.prompt_reps < 1:
        ap.error("--threads, --prompt, --generate, --reps and --prompt-reps must be >= 1")
    return args


def make_float(cfg, seed):
    torch.manual_seed(seed)
    return Llama(*cfg).eval()


def lowbit_copy(model, bits, group):
    """model with every nn.Linear quantized by lowbit, sharing model's (float) embedding. Built
    block by block, so the float weights are never all copied at once."""
    blocks = model.blocks
    model.blocks = torch.nn.ModuleList()
    try:
        q = copy.deepcopy(model, {id(model.embed): model.embed, id(model.embed.weight): model.embed.weight})
    finally:
        model.blocks = blocks
    q.blocks = torch.nn.ModuleList(lowbit.torch.quantize_(copy.deepcopy(b), bits=bits, group_size=group)
                                   for b in blocks)
    return lowbit.torch.quantize_(q, bits=bits, group_size=group)  # the head


def generate(model, prompt, steps, pause_s=0.0, prompt_reps=1, forced=None):
    """Greedy tokens after `prompt` ([t] int64): the prompt's pass gives the first, each of
    `steps` - 1 decode steps one more. Returns (tokens, prompt pass seconds [prompt_reps],
    decode step seconds). `forced`: feed these tokens instead of the model's own (teacher forcing),
    to compare next-token choices on the same context."""
    t = prompt.numel()
    prompt_s = []
    for _ in range(prompt_reps):  # each pass from an empty cache
        caches = model.caches(1, t + steps)
        t0 = time.perf_counter()
        logits = model(prompt[None], caches, 0)
        prompt_s.append(time.perf_counter() - t0)
    tokens = [int(logits.argmax(-1))]
    step_s = []
    for i in range(steps - 1):
        if pause_s:
            time.sleep(pause_s)
        nxt = tokens[-1] if forced is None else forced[i]
        t0 = time.perf_counter()
        logits = model(torch.tensor([[nxt]]), caches, t + i)
        tokens.append(int(logits.argmax(-1)))
        step_s.append(time.perf_counter() - t0)
    return tokens, prompt_s, step_s


def layer_steps(model, steps):
    """Seconds per decode step of `model`'s lowbit layers alone: every LowbitLinear once per step,
    in the order a forward calls them, on one row (m = 1), with nothing between them: the part of
    a step that reads the weights (the rest of a step is torch's operators and Python)."""
    layers = [m for m in model.modules() if isinstance(m, lowbit.torch.LowbitLinear)]
    xs = [torch.randn(1, m.in_features) for m in layers]
    out = []
    for _ in range(steps):
        t0 = time.perf_counter()
        for m, x in zip(layers, xs):
            m(x)
        out.append(time.perf_counter() - t0)
    return out


def lowbit_cli():
    """The `lowbit` command: on PATH, else the build tree's beside the package imported."""
    found = shutil.which("lowbit")
    if found:
        return found
    build = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(lowbit.torch.__file__))), "tools", "lowbit")
    return build if os.access(build, os.X_OK) else None


def memory_probe(cli, bits, threads):
    """One `lowbit bench --widths` decode run, in its own process while this one waits: GB/s of
    a plain read from DRAM and of lowbit's bare decode GEMV, by thread count."""
    out = subprocess.run([cli, "bench", "--widths", "--bits", str(bits), "--case", "decode", "--threads",
                          ",".join(map(str, threads)), "--reps", "7", "--json"],
                         check=True, capture_output=True, text=True).stdout
    return {r["threads"]: (r["stream_gbps"], r["decode_gbps"]) for r in json.loads(out)["rows"]}


def percentile(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


def peak_rss_mib(args, kind):
    """Peak resident memory of generating with one model alone, measured in a child process."""
    cmd = [sys.executable, os.path.abspath(__file__), "--memory-of", kind, "--model", args.model,
           "--threads", str(args.threads), "--prompt", str(args.prompt), "--generate", str(args.generate),
           "--bits", str(args.bits), "--group", str(args.group), "--seed", str(args.seed)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[-1])["peak_rss_mib"]


def memory_child(args):
    """--memory-of: build one model, then the peak RSS of a generation from that point on
    (/proc/self/clear_refs 5 resets the high-water mark; the float weights lowbit was quantized
    from are freed and trimmed first)."""
    set_threads(args.threads, None if args.memory_of == "float" else LOWBIT_BLAS_THREADS)
    with torch.inference_mode():
        model = make_float(MODELS[args.model], args.seed)
        if args.memory_of == "lowbit":
            model = lowbit_copy(model, args.bits, args.group)
        gc.collect()
        ctypes.CDLL(None).malloc_trim(0)
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        generate(model, torch.randint(MODELS[args.model][6], (args.prompt,)), args.generate)
    with open("/proc/self/status") as f:
        hwm_kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    print(json.dumps({"peak_rss_mib": hwm_kib / 1024}))


def cpu_model():
    with open("/proc/cpuinfo") as f:
        return next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), platform.machine())


def main(args):
    cfg = MODELS[args.model]
    hidden, inter, heads, kv_heads, head_dim, blocks, vocab = cfg
    threads = sorted({1, args.threads})
    pause_s = args.pause_ms / 1e3
    print(f"{args.model}: {blocks} decoder blocks (hidden {hidden}, intermediate {inter}, {heads} heads, "
          f"{kv_heads} KV heads), vocabulary {vocab}, random weights; torch {torch.__version__}; "
          f"{cpu_model()}, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at start")
    print(f"lowbit: {args.bits}-bit weights, group {args.group}, every nn.Linear (the tied head included), "
          f"int8 activations; the embedding stays float")
    with torch.inference_mode():
        t0 = time.perf_counter()
        fmodel = make_float(cfg, args.seed)
        t1 = time.perf_counter()
        qmodel = lowbit_copy(fmodel, args.bits, args.group)
        print(f"built in {t1 - t0:.1f} s, quantize_ in {time.perf_counter() - t1:.1f} s\n")
        prompt = torch.randint(vocab, (args.prompt,), generator=torch.Generator().manual_seed(args.seed + 1))

        contenders = [(kind, t, 0.0) for t in threads for kind in ("float", "lowbit")]
        if pause_s > 0:
            contenders += [("lowbit", t, pause_s) for t in threads]
        contenders += [("layers", t, 0.0) for t in threads]
        models = {"float": fmodel, "lowbit": qmodel}
        results = {c: {"prompt": [], "steps": [], "tokens": []} for c in contenders}
        cli = lowbit_cli() if args.threads > 1 and not args.no_probe else None
        probes = []
        for _ in range(args.reps):
            if cli:
                probes.append(memory_probe(cli, args.bits, threads))
            for c in contenders:
                kind, t, pause = c
                set_threads(t, None if kind == "float" else LOWBIT_BLAS_THREADS)
                # A pool that spins after its last job (OpenBLAS: ~0.1 s) must not take the cores
                # of the next contender.
                time.sleep(0.2)
                if kind == "layers":
                    results[c]["steps"] += layer_steps(qmodel, args.generate - 1)
                    continue
                tokens, prompt_s, step_s = generate(models[kind], prompt, args.generate, pause, args.prompt_reps)
                results[c]["prompt"] += prompt_s
                results[c]["steps"] += step_s
                results[c]["tokens"].append(tokens)
        set_threads(args.threads, LOWBIT_BLAS_THREADS)
        forced, _, _ = generate(qmodel, prompt, args.generate, forced=results[contenders[0]]["tokens"][0][:-1])
        # torch's own float operators (attention, norms) need not give the same bits at every
        # thread count; lowbit's int8 activations can turn such a difference into another token.
        float_logits = {}
        for t in sorted({1, args.threads}):
            set_threads(t)
            float_logits[t] = fmodel(prompt[None], fmodel.caches(1, args.prompt), 0)
        float_diff = float((float_logits[1] - float_logits[args.threads]).abs().max())

    rss = {} if args.no_memory else {kind: peak_rss_mib(args, kind) for kind in ("float", "lowbit")}
    print(f"{'model':7} {'threads':>7} {'pause':>6}   {'prompt tokens/s':>15}   {'generated tokens/s':>18} "
          f"{'p90 ms/token':>13}   {'peak RSS MiB':>12}")
    rate = {}
    for c in contenders:
        kind, t, pause = c
        if kind == "layers":
            continue
        r = results[c]
        rate[c] = (args.prompt / statistics.median(r["prompt"]), 1 / statistics.median(r["steps"]))
        peak = f"{rss[kind]:.0f}" if kind in rss and t == args.threads and not pause else ""
        print(f"{kind:7} {t:7} {f'{pause * 1e3:g}ms' if pause else '-':>6}   {rate[c][0]:15.1f}   "
              f"{rate[c][1]:18.2f} {percentile(r['steps'], 90) * 1e3:13.1f}   {peak:>12}")
    if args.threads > 1:
        for pause in sorted({p for _, _, p in contenders}):
            lo, hi = ("lowbit", 1, pause), ("lowbit", args.threads, pause)
            print(f"lowbit at {args.threads} vs 1 thread{f' (pause {pause * 1e3:.0f} ms)' if pause else ''}: "
                  f"prompt {rate[hi][0] / rate[lo][0]:.2f}x, generated {rate[hi][1] / rate[lo][1]:.2f}x")
    layers_ms = {t: statistics.median(results[("layers", t, 0.0)]["steps"]) * 1e3 for t in threads}
    step_ms = {t: 1e3 / rate[("lowbit", t, 0.0)][1] for t in threads}
    print("lowbit's linear layers alone, ms per decode step: " +
          ", ".join(f"{layers_ms[t]:.3f} at {t} thread(s)" for t in threads) +
          (f" ({layers_ms[1] / layers_ms[args.threads]:.2f}x)" if args.threads > 1 else "") +
          "; the rest of a step (step - layers): " +
          ", ".join(f"{step_ms[t] - layers_ms[t]:.3f}" for t in threads))
    if probes:
        med = {t: [statistics.median(p[t][i] for p in probes) for i in (0, 1)] for t in threads}
        hi = args.threads
        print(f"the memory, once per rep (lowbit bench --widths, {args.bits}-bit, 14336x4096 from DRAM), GB/s at 1 / "
              f"{hi} thread(s): a plain read {med[1][0]:.1f} / {med[hi][0]:.1f} ({med[hi][0] / med[1][0]:.2f}x), "
              f"lowbit's bare decode {med[1][1]:.1f} / {med[hi][1]:.1f} ({med[hi][1] / med[1][1]:.2f}x)")
    elif args.threads > 1 and not args.no_probe:
        print("the memory's own read rate: not measured (no `lowbit` command on PATH or in the build tree)")
    for t in threads:
        f, q = rate[("float", t, 0.0)], rate[("lowbit", t, 0.0)]
        print(f"lowbit vs float at {t} thread(s): prompt {q[0] / f[0]:.2f}x, generated {q[1] / f[1]:.2f}x")

    want = results[("float", 1, 0.0)]["tokens"][0]
    got = results[("lowbit", 1, 0.0)]["tokens"][0]
    same_prefix = next((i for i, (a, b) in enumerate(zip(want, got)) if a != b), len(want))
    teacher = sum(a == b for a, b in zip(forced, want))
    lowbit_runs = [tok for c in contenders if c[0] == "lowbit" for tok in results[c]["tokens"]]
    float_runs = [tok for c in contenders if c[0] == "float" for tok in results[c]["tokens"]]
    print(f"\ngreedy tokens: lowbit's first {same_prefix} of {len(want)} equal float's (after the first "
          f"difference the two read different contexts); fed float's tokens, lowbit picks float's next token "
          f"at {teacher} of {len(want)} positions")
    print(f"every lowbit generation (each thread count and pause) gave the same tokens: "
          f"{'yes' if all(t == lowbit_runs[0] for t in lowbit_runs) else 'NO'}; every float one: "
          f"{'yes' if all(t == float_runs[0] for t in float_runs) else 'no'}")
    print(f"float's own prompt logits at 1 and {args.threads} thread(s): "
          f"{'bit-identical' if float_diff == 0 else f'differ by up to {float_diff:.1e}'} (torch's operators; "
          f"lowbit's linear layers give the same bits at every thread count)")
    print(f"\ntokens/s from the median of {args.reps} x {args.prompt_reps} prompt passes and of "
          f"{args.reps} x {args.generate - 1} decode steps per row (the layers alone: as many steps); the rows' "
          f"generations interleaved; "
          f"peak RSS: that model alone generating at {args.threads} thread(s), in a child process; "
          f"load average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    ARGS = parse_args()
    (memory_child if ARGS.memory_of else main)(ARGS)
