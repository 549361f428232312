"""Threads from Python: no call waits for a late worker (a worker held mid-task, as the OS holds
one it deschedules), and a process that imports numpy's and torch's lowbit has one lowbit."""
import os
import subprocess
import sys
import textwrap
import time
import weakref

import numpy as np
import pytest

import lowbit
from lowbit import _lowbit as native  # the test-only worker hold (ops/thread_pool.h)
from helpers import random_weights, same_bits

N, K = 4096, 1024  # large enough that every 2-thread plan gives the worker tasks


def weights(seed):
    return random_weights(np.random.default_rng(seed), N, K, 4, 32, bias=True)


def call_until_a_worker_is_held(call):
    """Runs call() until a worker is held in one of them (at most 60 s) and returns that call's
    result: the call returned while its worker was still held."""
    native._hold_next_worker_task()
    deadline = time.monotonic() + 60
    result = None
    while not native._worker_held() and time.monotonic() < deadline:
        result = call()
    assert native._worker_held(), "no call returned while its worker was held (in 60 s)"
    return result


def release_and_wait_for_the_worker():
    """Releases the held worker and waits until it took a task of another call: it has left
    the held call by then."""
    before = native._worker_tasks_taken()
    native._release_held_worker()
    q, s, _, _ = weights(99)
    other, x = lowbit.pack(q, s, None, None, 4, 32), np.ones((1, K), np.float32)
    deadline = time.monotonic() + 60
    while native._worker_tasks_taken() == before and time.monotonic() < deadline:
        other.linear(x, num_threads=2)
    assert native._worker_tasks_taken() > before, "the held worker never came back"
    assert not native._worker_hold_timed_out()


@pytest.fixture
def hold():
    yield
    native._stop_holding_workers()


def test_numpy_calls_do_not_wait_for_a_held_worker(hold):
    q, s, z, b = weights(1)
    w = lowbit.pack(q, s, z, b, 4, 32)
    x = np.random.default_rng(2).standard_normal((1, K)).astype(np.float32)
    y = call_until_a_worker_is_held(lambda: w.linear(x, num_threads=2))
    assert same_bits(y, lowbit._reference_linear(q, s, z, b, 4, 32, x))
    release_and_wait_for_the_worker()


def aligned_bytes(data):
    """A 64-byte aligned uint8 numpy array holding data (packed weights must start aligned)."""
    buf = np.empty(len(data) + 64, np.uint8)
    start = -buf.ctypes.data % 64
    a = buf[start:start + len(data)]
    a[:] = np.frombuffer(data, np.uint8)
    return a


def test_torch_ops_do_not_wait_for_a_held_worker_which_keeps_the_packed_memory_alive(hold):
    torch = pytest.importorskip("torch")
    import lowbit.torch as lt
    q, s, z, b = weights(3)
    x = torch.randn(1, K, generator=torch.Generator().manual_seed(4))
    ref = lowbit._reference_linear(q, s, z, b, 4, 32, x.numpy())
    # The packed bytes in memory torch does not own (a numpy array): a late worker still reads
    # them after the call returned, so it must keep them alive however the caller drops them.
    memory = aligned_bytes(lowbit.pack(q, s, z, b, 4, 32).to_bytes())
    alive = weakref.ref(memory)
    packed = torch.from_numpy(memory)
    del memory
    y = call_until_a_worker_is_held(lambda: torch.ops.lowbit.linear(x, packed, None, None, 2))
    assert same_bits(y.numpy(), ref)
    del packed
    assert alive() is not None, "the packed memory was freed under a worker still reading it"
    release_and_wait_for_the_worker()
    deadline = time.monotonic() + 60
    while alive() is not None and time.monotonic() < deadline:
        time.sleep(0.01)  # the worker lets the storage go (with the GIL this thread gives up)
    assert alive() is None, "the packed memory is never freed"

    layer = lt.LowbitLinear.from_packed(torch.ops.lowbit.pack(*(None if a is None else torch.from_numpy(a)
                                                                for a in (q, s, z, b)), 4, 32), num_threads=2)
    with torch.inference_mode():
        y = call_until_a_worker_is_held(lambda: layer(x))
    assert same_bits(y.numpy(), ref)
    release_and_wait_for_the_worker()


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
