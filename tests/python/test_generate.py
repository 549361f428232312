"""examples/torch_generate.py in a small configuration: its model's KV cache, lowbit's tokens at
every thread count, and the script's report (docs/python.md)."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples")


def example(name):
    sys.path.insert(0, EXAMPLES)  # the examples import each other
    try:
        spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, name + ".py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(EXAMPLES)


def test_decoding_with_the_kv_cache_gives_the_logits_of_a_full_forward_pass():
    gen, llama = example("torch_generate"), example("llama")
    model = gen.make_float(llama.MODELS["tiny"], 0)
    prompt = torch.randint(512, (9,), generator=torch.Generator().manual_seed(1))
    with torch.inference_mode():
        caches = model.caches(1, 16)
        step = model(prompt[None], caches, 0)
        tokens = list(prompt)
        for start in range(9, 15):
            tokens.append(int(step.argmax(-1)))
            step = model(torch.tensor([[tokens[-1]]]), caches, start)
            full = model(torch.tensor([tokens]), model.caches(1, 16), 0)
            torch.testing.assert_close(step, full, rtol=1e-5, atol=1e-4)


def test_lowbit_generates_the_same_logits_at_every_thread_count():
    gen, llama = example("torch_generate"), example("llama")
    cfg = llama.MODELS["tiny"]
    model = gen.lowbit_copy(gen.make_float(cfg, 0), 4, 32)
    prompt = torch.randint(cfg[6], (12,), generator=torch.Generator().manual_seed(2))
    old = torch.get_num_threads()
    runs = []
    try:
        with torch.inference_mode():
            for threads in (1, 2, 3):
                torch.set_num_threads(threads)  # LowbitLinear's threads follow torch's
                caches, tokens, logits = model.caches(1, 20), prompt[None], []
                for start in (0, 12, 13, 14, 15):
                    logits.append(model(tokens, caches, start))
                    tokens = logits[-1].argmax(-1, keepdim=True)
                runs.append(torch.cat(logits))
    finally:
        torch.set_num_threads(old)
    assert all(torch.equal(r.view(torch.int32), runs[0].view(torch.int32)) for r in runs[1:])


def test_the_script_reports_rates_memory_and_agreement():
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "torch_generate.py"), "--model", "tiny", "--threads",
                        "2", "--prompt", "16", "--generate", "8", "--reps", "2", "--prompt-reps", "2"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stderr
    rows = [row for row in map(str.split, r.stdout.splitlines()) if row[:1] in (["float"], ["lowbit"])
            and row[1].isdigit()]
    assert [row[:3] for row in rows] == [["float", "1", "-"], ["lowbit", "1", "-"], ["float", "2", "-"],
                                         ["lowbit", "2", "-"], ["lowbit", "1", "5ms"], ["lowbit", "2", "5ms"]]
    assert all(float(v) > 0 for row in rows for v in row[3:5])
    assert float(rows[2][-1]) > 0 and float(rows[3][-1]) > 0  # peak RSS of float and lowbit
    assert "every lowbit generation (each thread count and pause) gave the same tokens: yes" in r.stdout
    assert "float's own prompt logits at 1 and 2 thread(s): " in r.stdout
    layers = re.search(r"lowbit's linear layers alone, ms per decode step: ([\d.]+) at 1 thread\(s\), "
                       r"([\d.]+) at 2 thread\(s\) \(([\d.]+)x\); the rest of a step \(step - layers\): "
                       r"(-?[\d.]+), (-?[\d.]+)", r.stdout)
    assert layers and all(float(v) > 0 for v in layers.groups()[:3]), r.stdout
    probe = re.search(r"the memory, once per rep .*GB/s at 1 / 2 thread\(s\): a plain read ([\d.]+) / ([\d.]+) "
                      r"\(([\d.]+)x\), lowbit's bare decode ([\d.]+) / ([\d.]+)", r.stdout)
    assert probe and all(float(v) > 0 for v in probe.groups()), r.stdout


def test_the_step_profile_splits_a_decode_step_at_each_thread_count():
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "torch_step_profile.py"), "--model", "tiny",
                        "--threads", "2", "--steps", "3", "--context", "8", "--rounds", "2"],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stderr
    rows = [row for row in map(str.split, r.stdout.splitlines()) if len(row) == 6 and row[1] in ("1", "2")]
    assert [row[:2] for row in rows] == [["1", "1"], ["1", "2"], ["2", "1"], ["2", "2"], ["med", "1"], ["med", "2"]]
    assert all(float(v) > 0 for row in rows for v in row[2:])
    assert "2 vs 1 thread (medians): step " in r.stdout
    bad = subprocess.run([sys.executable, os.path.join(EXAMPLES, "torch_step_profile.py"), "--rounds", "0"],
                         capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert bad.returncode == 2 and "--rounds must be >= 1" in bad.stderr
