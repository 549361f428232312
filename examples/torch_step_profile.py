"""Where a decode step of examples/torch_generate.py's model goes, at 1 thread and at all
(torch.profiler): lowbit's linear layers, with the GB/s of weights they read, and the rest of
the step (attention, norms, rotary: torch's own operators), and how each part scales with the
thread count. A decode step reads every weight once from DRAM, so the linear layers scale at
most as the memory does from 1 to T threads, and the whole step at most as they do unless the
rest scales better (docs/python.md, "Measured").

    PYTHONPATH=build/python python3 examples/torch_step_profile.py [--threads 2] [--steps 20]
"""
import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import LOWBIT_BLAS_THREADS, MODELS, set_threads  # noqa: E402
from torch_generate import lowbit_copy, make_float  # noqa: E402

import lowbit.torch  # noqa: E402


def weight_bytes(model):
    """Bytes a decode step's GEMVs read: every layer's planes and bf16 scales (not the layouts'
    column sums, which the streaming GEMV does not read)."""
    return sum(m.out_features * m.in_features * m.bits // 8 + m.out_features * (m.in_features // m.group_size) * 2
               for m in model.modules() if isinstance(m, lowbit.torch.LowbitLinear))


def profile_steps(model, vocab, threads, context, steps):
    """(median ms of an unprofiled decode step, ms of lowbit::linear and of everything else per
    profiled step) at `threads` torch threads, after a `context`-token prompt."""
    set_threads(threads, LOWBIT_BLAS_THREADS)
    caches = model.caches(1, context + 3 * steps)
    model(torch.randint(vocab, (1, context)), caches, 0)
    pos = context
    for _ in range(steps):  # warm: plans made, threads awake, the cache's pages touched
        model(torch.tensor([[5]]), caches, pos)
        pos += 1
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        model(torch.tensor([[5]]), caches, pos)
        times.append(time.perf_counter() - t0)
        pos += 1
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for _ in range(steps):
            model(torch.tensor([[5]]), caches, pos)
            pos += 1
    events = prof.key_averages()
    linear_us = sum(e.self_cpu_time_total for e in events if e.key == "lowbit::linear")
    total_us = sum(e.self_cpu_time_total for e in events)
    return statistics.median(times) * 1e3, linear_us / 1e3 / steps, (total_us - linear_us) / 1e3 / steps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=MODELS, default="llama3.2-1b")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)), help="the 'all threads' count")
    ap.add_argument("--context", type=int, default=128, help="prompt tokens before the decode steps")
    ap.add_argument("--steps", type=int, default=20, help="decode steps timed, and as many profiled")
    ap.add_argument("--rounds", type=int, default=3, help="rounds, the thread counts alternating")
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--group", type=int, default=32)
    args = ap.parse_args()
    if min(args.threads, args.steps, args.context, args.rounds) < 1:
        ap.error("--threads, --steps, --context and --rounds must be >= 1")
    with torch.inference_mode():
        model = lowbit_copy(make_float(MODELS[args.model], 0), args.bits, args.group)
        gb = weight_bytes(model) / 1e9
        print(f"{args.model}, lowbit {args.bits}-bit group {args.group}: {gb * 1e3:.1f} MB of weights per decode step; "
              f"{args.steps} steps after {args.context} tokens")
        print(f"{'round':>5} {'threads':>7} {'step ms':>8} {'linear ms':>10} {'weights GB/s':>12} {'rest ms':>8}")
        counts = sorted({1, args.threads})
        rows = {t: [] for t in counts}
        for r in range(args.rounds):
            for t in counts:
                step, linear, rest = profile_steps(model, MODELS[args.model][6], t, args.context, args.steps)
                rows[t].append((step, linear, rest))
                print(f"{r + 1:5} {t:7} {step:8.2f} {linear:10.2f} {gb / linear * 1e3:12.1f} {rest:8.2f}")
        med = {t: [statistics.median(x[i] for x in rows[t]) for i in range(3)] for t in counts}
        for t in counts:
            step, linear, rest = med[t]
            print(f"{'med':>5} {t:7} {step:8.2f} {linear:10.2f} {gb / linear * 1e3:12.1f} {rest:8.2f}")
        if args.threads > 1:
            (s1, l1, r1), (st, lt, rt) = med[1], med[args.threads]
            print(f"{args.threads} vs 1 thread (medians): step {s1 / st:.2f}x, linear layers {l1 / lt:.2f}x, "
                  f"rest {r1 / rt:.2f}x")
    print("step: median of the unprofiled steps; linear / rest: lowbit::linear's and every other "
          "operator's self time per profiled step (the profiler adds its own overhead to the rest; Python's "
          "own time between operators is in neither).")


if __name__ == "__main__":
    main()
