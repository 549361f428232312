#!/usr/bin/env python3
"""What calling lowbit from Python costs over the C API, for a small layer (docs/python.md).

Times, interleaved in one process (medians of batches of calls): the C API's lowbit_linear called
from C++ (lowbit._time_c_api_linear), torch.ops.lowbit.linear and LowbitLinear called from
Python, PackedWeights.linear (numpy), and F.linear on the float weights for scale. The op's cost
without Python: build/python/lowbit_op_overhead (examples/op_overhead.cpp).

    PYTHONPATH=build/python /usr/bin/python3 examples/op_overhead.py [--n 256 --k 256 --m 1 --threads 1]
"""
import argparse
import os
import statistics
import time


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--m", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--calls", type=int, default=200, help="calls per batch")
    ap.add_argument("--rounds", type=int, default=31, help="batches per contender")
    return ap.parse_args()


ARGS = parse_args()
os.environ["OPENBLAS_NUM_THREADS"] = str(ARGS.threads)  # F.linear's BLAS, before torch loads it

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import lowbit  # noqa: E402
import lowbit.torch  # noqa: E402


def ns_per_call(fn, calls):
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn()
    return (time.perf_counter_ns() - t0) / calls


def main(args):
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    lin = torch.nn.Linear(args.k, args.n, bias=False)
    layer = lowbit.torch.LowbitLinear(lin, bits=4, group_size=32, scale_format="f32", num_threads=args.threads)
    packed = layer.packed
    weights = lowbit.from_bytes(packed.numpy())
    x = torch.randn(args.m, args.k)
    xn = x.numpy()
    op = torch.ops.lowbit.linear
    t = args.threads
    contenders = {
        "C API lowbit_linear (timed in C++)": lambda: lowbit._time_c_api_linear(weights, xn, args.calls, t),
        "torch.ops.lowbit.linear(x, packed)": lambda: ns_per_call(lambda: op(x, packed, None, None, t), args.calls),
        "LowbitLinear(x)": lambda: ns_per_call(lambda: layer(x), args.calls),
        "PackedWeights.linear(x) (numpy)": lambda: ns_per_call(lambda: weights.linear(xn, num_threads=t), args.calls),
        "F.linear(x, w) float32": lambda: ns_per_call(lambda: F.linear(x, lin.weight), args.calls),
    }
    assert np.array_equal(op(x, packed, None, None, t).numpy().view(np.uint32),
                          weights.linear(xn, num_threads=t).view(np.uint32))
    times = {name: [] for name in contenders}
    with torch.inference_mode():
        for fn in contenders.values():
            fn()
        for _ in range(args.rounds):
            for name, fn in contenders.items():
                times[name].append(fn())
    c_api = statistics.median(times["C API lowbit_linear (timed in C++)"])
    print(f"n={args.n} k={args.k} m={args.m} threads={args.threads}, 4-bit group 32, inference mode; "
          f"medians of {args.rounds} interleaved batches of {args.calls} calls")
    for name, v in times.items():
        med = statistics.median(v)
        print(f"{name:38} {med:9.0f} ns/call   over the C API {med - c_api:+7.0f} ns")


if __name__ == "__main__":
    main(ARGS)
