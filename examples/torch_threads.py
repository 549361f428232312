"""Which threads the torch ops should run on (docs/architecture.md, "Inside PyTorch"): lowbit's
own pool (an explicit num_threads) or torch's intra-op threads (the default), one contender per
process so neither's idle threads disturb the other.

    PYTHONPATH=build/python python3 examples/torch_threads.py torch 2
    PYTHONPATH=build/python python3 examples/torch_threads.py pool 2

Prints p50/p90/p99 of a tight loop of one 8192x2048 layer (m = 1) and of decode steps of a
Llama-3.2-1B-shaped model (--blocks blocks after a 128-token prompt), without and with a 5 ms
pause between steps."""
import argparse
import os
import sys
import time

import torch

import lowbit.torch as lt

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import LOWBIT_BLAS_THREADS, MODELS, Llama, set_threads  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("mode", choices=("torch", "pool"))
ap.add_argument("threads", type=int)
ap.add_argument("--blocks", type=int, default=4)
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--calls", type=int, default=400)
args = ap.parse_args()


def q(xs, p):
    s = sorted(xs)
    return s[min(len(s) - 1, int(p / 100 * len(s)))]


set_threads(args.threads, LOWBIT_BLAS_THREADS)
torch.manual_seed(0)
with torch.inference_mode():
    cfg = list(MODELS["llama3.2-1b"])
    cfg[5] = args.blocks
    model = Llama(*cfg).eval()
    model.blocks = torch.nn.ModuleList(lt.quantize_(b) for b in model.blocks)
    model.lm_head = torch.nn.Identity()  # the blocks' linear layers only
    for m in model.modules():
        if isinstance(m, lt.LowbitLinear):
            m.num_threads = args.threads if args.mode == "pool" else None
    layer = model.blocks[0].up_proj
    x = torch.randn(1, cfg[0])
    for _ in range(50):
        layer(x)
    loop = []
    for _ in range(args.calls):
        t0 = time.perf_counter()
        layer(x)
        loop.append(time.perf_counter() - t0)
    steps = {}
    for pause in (0, 5):
        prompt = torch.randint(1000, (1, 128))
        caches = model.caches(1, 128 + args.steps + 1)
        tok = model(prompt, caches, 0)[:, :8].argmax(-1)
        steps[pause] = []
        for i in range(args.steps):
            if pause:
                time.sleep(pause / 1e3)
            t0 = time.perf_counter()
            model(tok[:, None], caches, 128 + i)
            steps[pause].append(time.perf_counter() - t0)
print(f"{args.mode:5} {args.threads} thread(s), load {os.getloadavg()[0]:.2f} | loop µs p50 {q(loop, 50) * 1e6:6.1f} "
      f"p90 {q(loop, 90) * 1e6:6.1f} p99 {q(loop, 99) * 1e6:6.1f} | decode step ms p50 {q(steps[0], 50) * 1e3:6.2f} "
      f"p99 {q(steps[0], 99) * 1e3:6.2f} | with 5 ms pause p50 {q(steps[5], 50) * 1e3:6.2f} "
      f"p99 {q(steps[5], 99) * 1e3:6.2f}")
