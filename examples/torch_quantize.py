#!/usr/bin/env python3
"""Quantize a Llama-style decoder block with lowbit and compare it with the float block.

The PyTorch twin of `make run`: one transformer block with the shapes of a `lowbit run` model
preset (random weights), `lowbit.torch.quantize_` swaps its seven nn.Linear layers for
LowbitLinear (4-bit weights in groups of 32, int8 activations), and the script prints the
kernels lowbit chose, the output error against the float block, and the time per token of both
at m = 1 (decode) and m = 128 (prefill), on the same number of threads.

    PYTHONPATH=build/python /usr/bin/python3 examples/torch_quantize.py [--model llama3.2-1b]
        [--threads T] [--bits 4] [--group 32] [--reps 15]
"""
import argparse
import copy
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

import lowbit
import lowbit.torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import LOWBIT_BLAS_THREADS, MODELS, DecoderBlock, set_threads  # noqa: E402


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=[m for m in MODELS if m != "tiny"], default="llama3.2-1b")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--group", type=int, default=32)
    ap.add_argument("--zero-points", action="store_true", help="asymmetric weights (int8 zero points)")
    ap.add_argument("--prefill", type=int, default=128, help="tokens of the prefill measurement")
    ap.add_argument("--reps", type=int, default=15)
    return ap.parse_args()


def timed_medians(contenders, reps, threads, blas_threads):
    """Median seconds per call of each contender, interleaved (A B A B ...) so they share the
    machine's noise. With several threads each call follows a 150 ms pause and then an untimed
    call of the same contender: OpenBLAS (~0.1 s), torch's OpenMP (~10 ms) and lowbit keep their
    threads spinning for a while after a call, and on a machine with few cores a spinning pool
    would take the cores of whoever runs next; after the pause every thread sleeps, and the
    untimed call wakes the contender's own (on the 2-vCPU VM a sleeping thread can take
    milliseconds to wake), so the timed call costs what a call costs in a running model, where
    calls follow each other. blas_threads[name]: OpenBLAS's threads for that contender (set
    before its calls, untimed)."""
    for name, fn in contenders.items():
        set_threads(threads, blas_threads.get(name))
        fn()  # warm-up: plans, caches, first-touch of buffers
    times = {name: [] for name in contenders}
    for _ in range(reps):
        for name, fn in contenders.items():
            set_threads(threads, blas_threads.get(name))
            if threads > 1:
                time.sleep(0.15)
                fn()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def relative_error(got, want):
    return ((got - want).norm() / want.norm()).item()


def main(args):
    hidden, inter, heads, kv_heads, head_dim, blocks, _ = MODELS[args.model]
    torch.manual_seed(0)
    set_threads(args.threads)  # torch's and OpenBLAS's (float's F.linear); lowbit's ops follow torch's
    # (lowbit's contenders run OpenBLAS, their attention's only, on LOWBIT_BLAS_THREADS: llama.py)
    print(f"{args.model}: one decoder block (hidden {hidden}, intermediate {inter}, {heads} heads, "
          f"{kv_heads} KV heads; the model has {blocks}), random weights; torch {torch.__version__}, "
          f"{args.threads} thread(s); lowbit weights {args.bits}-bit, group {args.group}"
          f"{', zero points' if args.zero_points else ''}, int8 activations")
    with torch.inference_mode():
        block = DecoderBlock(hidden, inter, heads, kv_heads, head_dim).eval()
        t0 = time.perf_counter()
        quantized = lowbit.torch.quantize_(copy.deepcopy(block), bits=args.bits, group_size=args.group,
                                           zero_points=args.zero_points)
        print(f"quantize_: {time.perf_counter() - t0:.1f} s")

        float_bytes = sum(m.weight.numel() * 4 for m in block.modules() if isinstance(m, torch.nn.Linear))
        packed_bytes = sum(m.packed.numel() for m in quantized.modules() if isinstance(m, lowbit.torch.LowbitLinear))
        print(f"linear weights: float32 {float_bytes / 2**20:.0f} MiB, lowbit {packed_bytes / 2**20:.0f} MiB\n")
        print(f"{'layer':10} {'n':>6} {'k':>6}  kernels at m = 1 / m = {args.prefill}")
        for name, m in quantized.named_modules():
            if isinstance(m, lowbit.torch.LowbitLinear):
                plans = [lowbit.explain(n=m.out_features, k=m.in_features, m=rows, bits=args.bits, group=args.group,
                                        zeros=args.zero_points, threads=args.threads)["plan"]["winner"]
                         for rows in (1, args.prefill)]
                print(f"{name:10} {m.out_features:6} {m.in_features:6}  {plans[0]} / {plans[1]}")

        float_linears = [m for m in block.modules() if isinstance(m, torch.nn.Linear)]
        lowbit_linears = [m for m in quantized.modules() if isinstance(m, lowbit.torch.LowbitLinear)]
        print(f"\n{'':17}{'whole block, ms/token':^32}{'its 7 linear layers, ms/token':^32}")
        print(f"{'tokens':>6} {'rel. error':>10} " + f"{'float':>10} {'lowbit':>10} {'speedup':>9}  " * 2)
        for tokens in (1, args.prefill):
            x = torch.randn(1, tokens, hidden)
            want, got = block(x), quantized(x)
            # The error of what the block adds to its input (the residual stream itself is exact).
            err = relative_error(got - x, want - x)
            inputs = [torch.randn(tokens, m.in_features) for m in float_linears]
            t = timed_medians({
                "float": lambda: block(x),
                "lowbit": lambda: quantized(x),
                "float linears": lambda: [F.linear(a, m.weight) for a, m in zip(inputs, float_linears)],
                "lowbit linears": lambda: [m(a) for a, m in zip(inputs, lowbit_linears)],
            }, args.reps, args.threads, {"lowbit": LOWBIT_BLAS_THREADS, "lowbit linears": LOWBIT_BLAS_THREADS})
            row = f"{tokens:6} {err:10.4f} "
            for a, b in (("float", "lowbit"), ("float linears", "lowbit linears")):
                row += f"{t[a] * 1e3 / tokens:10.3f} {t[b] * 1e3 / tokens:10.3f} {t[a] / t[b]:8.2f}x  "
            print(row)
    print("\nrel. error: |lowbit - float| / |float| of the block's update (output - input). Times: medians "
          f"of {args.reps} interleaved calls; the block's attention and norms run in float in both, the "
          "linear layers alone compare lowbit with torch.nn.functional.linear (float32).")


if __name__ == "__main__":
    main(parse_args())
