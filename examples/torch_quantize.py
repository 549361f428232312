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
import math
import os
import statistics
import time

# name: (hidden, intermediate, heads, kv_heads, head_dim, blocks), as tools/models.h.
MODELS = {
    "llama3-8b": (4096, 14336, 32, 8, 128, 32),
    "llama3.2-1b": (2048, 8192, 32, 8, 64, 16),
    "qwen2.5-0.5b": (896, 4864, 14, 2, 64, 24),
}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", choices=MODELS, default="llama3.2-1b")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--bits", type=int, default=4)
    ap.add_argument("--group", type=int, default=32)
    ap.add_argument("--zero-points", action="store_true", help="asymmetric weights (int8 zero points)")
    ap.add_argument("--prefill", type=int, default=128, help="tokens of the prefill measurement")
    ap.add_argument("--reps", type=int, default=15)
    return ap.parse_args()


ARGS = parse_args()
# Debian's torch runs F.linear on the system BLAS (OpenBLAS), whose thread count is its own: set it
# before torch loads it, so float and lowbit run on the same number of threads.
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import lowbit  # noqa: E402
import lowbit.torch  # noqa: E402


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary(x, positions, base=500000.0):
    # x: [batch, heads, tokens, head_dim]; rotates pairs (i, i + d/2) by position-dependent angles.
    half = x.shape[-1] // 2
    freqs = base ** (-torch.arange(half, dtype=torch.float32) / half)
    angles = positions[:, None].float() * freqs[None, :]
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class DecoderBlock(torch.nn.Module):
    """Pre-norm attention (grouped-query, rotary, causal) and a SwiGLU MLP, as in Llama 3."""

    def __init__(self, hidden, inter, heads, kv_heads, head_dim):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.attn_norm, self.mlp_norm = RMSNorm(hidden), RMSNorm(hidden)
        self.q_proj = torch.nn.Linear(hidden, heads * head_dim, bias=False)
        self.k_proj = torch.nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.v_proj = torch.nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.o_proj = torch.nn.Linear(heads * head_dim, hidden, bias=False)
        self.gate_proj = torch.nn.Linear(hidden, inter, bias=False)
        self.up_proj = torch.nn.Linear(hidden, inter, bias=False)
        self.down_proj = torch.nn.Linear(inter, hidden, bias=False)

    def forward(self, x):  # x: [batch, tokens, hidden]
        b, t, _ = x.shape
        h = self.attn_norm(x)
        q = self.q_proj(h).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(h).view(b, t, self.kv_heads, self.head_dim).transpose(1, 2)
        positions = torch.arange(t)
        q, k = rotary(q, positions), rotary(k, positions)
        k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
        v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        attn = (scores.softmax(-1) @ v).transpose(1, 2).reshape(b, t, -1)
        x = x + self.o_proj(attn)
        h = self.mlp_norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


def timed_medians(contenders, reps, threads):
    """Median seconds per call of each contender, interleaved (A B A B ...) so they share the
    machine's noise. With several threads each call follows a 150 ms pause: lowbit's pthreadpool
    and torch's OpenMP keep their workers spinning for a while after a call, and on a machine
    with few cores a spinning pool would take the cores of whoever runs next."""
    for fn in contenders.values():
        fn()  # warm-up: plans, caches, first-touch of buffers
    times = {name: [] for name in contenders}
    for _ in range(reps):
        for name, fn in contenders.items():
            if threads > 1:
                time.sleep(0.15)
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}


def relative_error(got, want):
    return ((got - want).norm() / want.norm()).item()


def main(args):
    hidden, inter, heads, kv_heads, head_dim, blocks = MODELS[args.model]
    torch.manual_seed(0)
    torch.set_num_threads(args.threads)  # torch's own threads, which lowbit's ops also use
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
            }, args.reps, args.threads)
            row = f"{tokens:6} {err:10.4f} "
            for a, b in (("float", "lowbit"), ("float linears", "lowbit linears")):
                row += f"{t[a] * 1e3 / tokens:10.3f} {t[b] * 1e3 / tokens:10.3f} {t[a] / t[b]:8.2f}x  "
            print(row)
    print("\nrel. error: |lowbit - float| / |float| of the block's update (output - input). Times: medians "
          f"of {args.reps} interleaved calls; the block's attention and norms run in float in both, the "
          "linear layers alone compare lowbit with torch.nn.functional.linear (float32).")


if __name__ == "__main__":
    main(ARGS)
