"""Issue 37 item 2, one contender per process (no interference between modes):
python3 item2_sep.py MODE THREADS  (MODE: pool | omp). Tight loop of one 8192x2048 layer and
decode steps of a Llama-3.2-1B-shaped model (--blocks blocks, 128-token prompt)."""
import argparse, os, sys, time
ap = argparse.ArgumentParser()
ap.add_argument("mode"); ap.add_argument("threads", type=int)
ap.add_argument("--blocks", type=int, default=4)
ap.add_argument("--steps", type=int, default=60)
ap.add_argument("--calls", type=int, default=400)
args = ap.parse_args()
sys.path.insert(0, "/work/main/examples")
import torch, lowbit, lowbit.torch
from llama import Llama, MODELS
def q(xs, p):
    s = sorted(xs); return s[min(len(s) - 1, int(p / 100 * len(s)))]
if hasattr(torch.ops.lowbit, "_experiment_torch_threads"):
    torch.ops.lowbit._experiment_torch_threads(args.mode == "omp")
elif args.mode != "pool":
    sys.exit("this build has no omp mode")
torch.set_num_threads(args.threads)
torch.manual_seed(0)
with torch.inference_mode():
    cfg = list(MODELS["llama3.2-1b"]); cfg[5] = args.blocks
    model = Llama(*cfg).eval()
    blocks = model.blocks; model.blocks = torch.nn.ModuleList()
    model.blocks = torch.nn.ModuleList(lowbit.torch.quantize_(b) for b in blocks); del blocks
    model.lm_head = torch.nn.Identity()
    lin = model.blocks[0].up_proj
    x = torch.randn(1, 2048)
    for _ in range(50): lin(x)
    tight = []
    for _ in range(args.calls):
        t0 = time.perf_counter(); lin(x); tight.append(time.perf_counter() - t0)
    res = {}
    for pause in (0, 5):
        prompt = torch.randint(1000, (1, 128))
        caches = model.caches(1, 128 + args.steps + 1)
        tok = model(prompt, caches, 0)[:, :8].argmax(-1)
        steps = []
        for i in range(args.steps):
            if pause: time.sleep(pause / 1e3)
            t0 = time.perf_counter()
            model(tok[:, None], caches, 128 + i)
            steps.append(time.perf_counter() - t0)
        res[pause] = steps
    print(f"{args.mode:5} {args.threads}T load {os.getloadavg()[0]:.2f} | tight us p50 {q(tight,50)*1e6:7.1f} p90 {q(tight,90)*1e6:7.1f} p99 {q(tight,99)*1e6:7.1f}"
          f" | step ms p50 {q(res[0],50)*1e3:6.2f} p99 {q(res[0],99)*1e3:6.2f} | paused p50 {q(res[5],50)*1e3:6.2f} p99 {q(res[5],99)*1e3:6.2f}")
