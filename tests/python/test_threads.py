"""Threads from Python: a process that imports numpy's and torch's lowbit has one lowbit."""
import os
import subprocess
import sys
import textwrap

import pytest

import lowbit


def run_python(code, pythonpath):
    """The output of code run in a fresh interpreter that imports lowbit from pythonpath."""
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=dict(os.environ, PYTHONPATH=pythonpath),
                       capture_output=True, text=True, cwd="/")
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


# Prints how many threads the torch op started after the numpy API started a pool of 6 for the
# same count, which liblowbit files are mapped, and where lowbit came from.
ONE_LOWBIT = """
    import os, numpy as np, torch, lowbit, lowbit.torch
    threads = lambda: len(os.listdir("/proc/self/task"))
    q = np.ones((256, 256), np.int8); s = np.full((256, 8), 0.01, np.float32)
    x = np.ones((64, 256), np.float32)
    y = lowbit.pack(q, s, None, None, 4, 32).linear(x, num_threads=6)
    before = threads()
    packed = torch.ops.lowbit.pack(torch.from_numpy(q), torch.from_numpy(s), None, None, 4, 32)
    yt = torch.ops.lowbit.linear(torch.from_numpy(x), packed, None, None, 6)
    assert np.array_equal(y, yt.numpy())
    mapped = sorted({l.split()[-1] for l in open("/proc/self/maps") if "liblowbit.so" in l})
    print(threads() - before, len(mapped), *mapped, lowbit.__file__)
"""


def test_numpy_and_torch_share_one_lowbit():
    pytest.importorskip("torch")
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(lowbit.__file__)))
    started, mapped, *_ = run_python(ONE_LOWBIT, package_dir)
    assert started == "0", f"the torch op started {started} threads of its own: a second lowbit"
    assert mapped == "1"


def test_an_installed_prefix_imports_both_with_its_own_lowbit(tmp_path):
    # The build this package comes from, installed: both extensions load the prefix's lowbit.
    pytest.importorskip("torch")
    build = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(lowbit.__file__))))
    cache = os.path.join(build, "CMakeCache.txt")
    if not os.path.exists(cache):
        pytest.skip("lowbit is not imported from a build tree")
    with open(cache) as f:
        pydir = next(line.split("=", 1)[1].strip() for line in f if line.startswith("LOWBIT_PYTHON_INSTALL_DIR:"))
    prefix = tmp_path / "prefix"
    subprocess.run(["cmake", "--install", build, "--prefix", str(prefix)], check=True, capture_output=True)
    started, mapped, library, package = run_python(ONE_LOWBIT, str(prefix / pydir))
    assert started == "0" and mapped == "1"
    assert library.startswith(f"{prefix}/") and package.startswith(f"{prefix / pydir}/"), (library, package)
