"""The numpy API (lowbit without torch): pack, linear, save/load/from_bytes, repack, info, explain."""
import json
import os
import pickle
import subprocess

import numpy as np
import pytest

import lowbit
from helpers import float_bound, random_weights, same_bits

BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(lowbit.__file__))))
CLI = os.environ.get("LOWBIT_CLI", os.path.join(BUILD, "tools", "lowbit"))
X86 = "avx2" in lowbit.info()["isa"] or lowbit.info()["profile"]["arch"] == "x86_64"
FOREIGN_TARGET = "aarch64-neon" if X86 else "x86-avx2"  # a layout no kernel here reads


def cli_json(*args):
    if not os.path.exists(CLI):
        pytest.skip(f"no lowbit command at {CLI} (set LOWBIT_CLI)")
    return json.loads(subprocess.run([CLI, *args, "--json"], check=True, capture_output=True, text=True).stdout)


@pytest.mark.parametrize("bits", range(1, 9))
@pytest.mark.parametrize("zeros,bias,clamp", [(False, False, None), (True, True, None), (True, False, (-0.5, 0.75))])
def test_linear_is_bit_exact_with_the_reference_and_within_the_float_bound(bits, zeros, bias, clamp):
    rng = np.random.default_rng(bits)
    n, k, group, m = 37, 128, 32, 9
    q, s, z, b = random_weights(rng, n, k, bits, group, zeros, bias)
    w = lowbit.pack(q, s, z, b, bits, group)
    x = rng.standard_normal((m, k), dtype=np.float32)
    cmin, cmax = clamp or (None, None)
    ref = lowbit._reference_linear(q, s, z, b, bits, group, x, cmin, cmax)
    for threads in (1, 2):
        assert same_bits(w.linear(x, cmin, cmax, num_threads=threads), ref)
    if clamp is None:
        yf = lowbit._float_reference_linear(q, s, z, b, bits, group, x)
        assert np.all(np.abs(ref.astype(np.float64) - yf) <= float_bound(x, q, s, z, yf))


def test_leading_dimensions_non_contiguous_input_and_out():
    rng = np.random.default_rng(1)
    q, s, z, b = random_weights(rng, 24, 64, 4, 16, True, True)
    w = lowbit.pack(q, s, z, b, 4, 16)
    x = rng.standard_normal((2, 3, 64), dtype=np.float32)
    y = w.linear(x)
    assert y.shape == (2, 3, 24) and y.dtype == np.float32
    assert same_bits(y.reshape(6, 24), lowbit._reference_linear(q, s, z, b, 4, 16, x.reshape(6, 64)))
    assert same_bits(w.linear(x[1, 2]), y[1, 2])  # a single row: [k] -> [n]
    xt = np.asfortranarray(x.reshape(6, 64))
    assert same_bits(w.linear(xt), y.reshape(6, 24))
    xs = rng.standard_normal((6, 128), dtype=np.float32)[:, ::2]
    assert same_bits(w.linear(xs), w.linear(np.ascontiguousarray(xs)))
    out = np.empty((2, 3, 24), np.float32)
    assert w.linear(x, out=out) is out and same_bits(out, y)


def test_zero_rows_give_an_empty_result():
    rng = np.random.default_rng(2)
    q, s, _, _ = random_weights(rng, 8, 32, 3, 16)
    w = lowbit.pack(q, s, None, None, 3, 16)
    assert w.linear(np.zeros((0, 32), np.float32)).shape == (0, 8)
    assert w.linear(np.zeros((4, 0, 32), np.float32)).shape == (4, 0, 8)


def test_save_load_from_bytes_pickle_and_buffer_round_trips(tmp_path):
    rng = np.random.default_rng(3)
    q, s, z, b = random_weights(rng, 19, 64, 5, 32, True, True)
    w = lowbit.pack(q, s, z, b, 5, 32)
    x = rng.standard_normal((3, 64), dtype=np.float32)
    y = w.linear(x)
    path = str(tmp_path / "w.lbw")
    lowbit.save(w, path)
    raw = open(path, "rb").read()
    assert raw == w.to_bytes() == bytes(w) and len(raw) == w.nbytes == w.info()["total_bytes"]
    view = np.frombuffer(w, np.uint8)  # the buffer protocol: no copy, read-only
    assert view.tobytes() == raw and not view.flags.writeable
    copies = [lowbit.load(path), lowbit.from_bytes(raw), lowbit.from_bytes(bytearray(raw)),
              lowbit.from_bytes(np.frombuffer(raw, np.uint8)), pickle.loads(pickle.dumps(w))]
    for c in copies:
        assert c.to_bytes() == raw and same_bits(c.linear(x), y)


def test_repack_gives_identical_results_and_fixes_weights_packed_for_another_cpu():
    rng = np.random.default_rng(4)
    q, s, z, b = random_weights(rng, 16, 64, 4, 32, False, True)
    here = lowbit.pack(q, s, z, b, 4, 32)
    x = rng.standard_normal((5, 64), dtype=np.float32)
    portable = lowbit.repack(here, "portable")
    assert portable.info()["layout"].startswith("portable") and same_bits(portable.linear(x), here.linear(x))
    foreign = lowbit.pack(q, s, z, b, 4, 32, target=FOREIGN_TARGET)
    with pytest.raises(RuntimeError, match="repack"):
        foreign.linear(x)
    fixed = lowbit.repack(foreign)
    assert fixed.info()["layout"] == here.info()["layout"] and same_bits(fixed.linear(x), here.linear(x))
    with pytest.raises(TypeError, match="PackedWeights"):
        lowbit.repack(b"not weights")


def test_quantize_weights_symmetric_and_asymmetric():
    rng = np.random.default_rng(5)
    w = rng.standard_normal((8, 64), dtype=np.float32)
    q, s, z = lowbit.quantize_weights(w, 4, 32)
    assert z is None and q.dtype == np.int8 and s.shape == (8, 2) and q.min() >= -8 and q.max() <= 7
    wq = np.repeat(s, 32, axis=1) * q
    assert np.all(np.abs(wq - w) <= np.repeat(s, 32, axis=1) * 0.5 * 1.0001)
    q, s, z = lowbit.quantize_weights(w, 3, 16, asymmetric=True, scale_format="bf16")
    assert z.shape == (8, 4) and z.dtype == np.int8
    assert np.all(s.view(np.uint32) & 0xFFFF == 0)  # bf16 values
    with pytest.raises(ValueError, match="scale_format"):
        lowbit.quantize_weights(w, 4, 32, scale_format="f16")
    with pytest.raises(ValueError, match="17"):
        lowbit.quantize_weights(w, 4, 17)


def test_info_and_explain_are_the_clis_json():
    assert lowbit.info() == cli_json("info")
    # working_set_mib=0: the weights alone, as the CLI (a fresh process) plans them; by default
    # explain takes this process's live packed weights, which other tests may have left.
    args = dict(n=4096, k=1024, m=7, bits=3, group=64, zeros=True, bias=True, threads=1, working_set_mib=0)
    assert lowbit.explain(**args) == cli_json("explain", "--n", "4096", "--k", "1024", "--m", "7", "--bits", "3",
                                              "--group", "64", "--zeros", "--bias", "--threads", "1")
    model = lowbit.explain(n=64, k=128, m=1, bits=4, group=32, working_set_mib=1024)
    assert model["plan"]["working_set_bytes"] == 1 << 30
    assert model == cli_json("explain", "--n", "64", "--k", "128", "--m", "1", "--bits", "4", "--group", "32",
                             "--working-set-mib", "1024")
    with pytest.raises(ValueError, match="working_set_mib"):
        lowbit.explain(n=64, k=64, m=1, bits=4, group=32, working_set_mib=-1)
    ex = lowbit.explain(n=64, k=64, m=1, bits=4, group=32, target="portable")
    assert ex["problem"]["target"] == "portable" and ex["layout"]["name"].startswith("portable")
    with pytest.raises(ValueError, match="group_size"):
        lowbit.explain(n=64, k=64, m=1, bits=4, group=17)
    with pytest.raises(ValueError, match="threads"):
        lowbit.explain(n=64, k=64, m=1, bits=4, group=32, threads=0)


def test_packed_info_is_the_inspect_json(tmp_path):
    rng = np.random.default_rng(6)
    q, s, z, _ = random_weights(rng, 16, 64, 2, 16, True)
    w = lowbit.pack(q, s, z, None, 2, 16)
    path = str(tmp_path / "w.lbw")
    w.save(path)
    inspected = cli_json("inspect", path)
    assert inspected.pop("file") == path and inspected.pop("valid") is True
    assert w.info() == inspected


def test_bad_arguments_raise_errors_naming_the_value(tmp_path):
    rng = np.random.default_rng(7)
    q, s, z, b = random_weights(rng, 8, 64, 4, 32, True, True)
    with pytest.raises(TypeError, match="qvals must be int8 .got int64"):
        lowbit.pack(q.astype(np.int64), s, None, None, 4, 32)
    with pytest.raises(TypeError, match="scales must be a numpy array"):
        lowbit.pack(q, s.tolist(), None, None, 4, 32)
    with pytest.raises(ValueError, match=r"scales has shape \(8, 2\), expected \(8, 4\)"):
        lowbit.pack(q, s, None, None, 4, 16)
    with pytest.raises(ValueError, match="zeros has shape"):
        lowbit.pack(q, s, z[:, :1], None, 4, 32)
    with pytest.raises(ValueError, match="bias has shape"):
        lowbit.pack(q, s, None, b[:3], 4, 32)
    with pytest.raises(ValueError, match="group = 48"):
        lowbit.pack(q, s, None, None, 4, 48)
    bad = q.copy()
    bad[2, 5] = 8
    with pytest.raises(ValueError, match=r"qvals\[133\].* = 8 is outside the 4-bit range"):
        lowbit.pack(bad, s, None, None, 4, 32)
    with pytest.raises(ValueError, match="bits"):
        lowbit.pack(q, s, None, None, 9, 32)
    with pytest.raises(ValueError, match="x86-avx9000"):
        lowbit.pack(q, s, None, None, 4, 32, target="x86-avx9000")
    w = lowbit.pack(q, s, z, b, 4, 32)
    with pytest.raises(TypeError, match="x must be float32 .got float64"):
        w.linear(np.zeros((2, 64)))
    with pytest.raises(ValueError, match=r"x has shape \(2, 63\), expected \(\.\.\., 64\)"):
        w.linear(np.zeros((2, 63), np.float32))
    with pytest.raises(ValueError, match="expected"):
        w.linear(np.array(1.0, np.float32))
    with pytest.raises(ValueError, match="out has shape"):
        w.linear(np.zeros((2, 64), np.float32), out=np.empty((2, 7), np.float32))
    buf = np.zeros(4 * 64, np.float32)
    with pytest.raises(ValueError, match="out must not overlap x"):
        w.linear(buf.reshape(4, 64), out=buf[:32].reshape(4, 8))
    with pytest.raises(ValueError, match="clamp_min"):
        w.linear(np.zeros((2, 64), np.float32), clamp_min=1.0, clamp_max=0.0)
    with pytest.raises(ValueError, match="NaN"):
        w.linear(np.zeros((2, 64), np.float32), clamp_min=float("nan"))
    raw = bytearray(w.to_bytes())
    raw[200] ^= 1
    with pytest.raises(ValueError, match="checksum"):
        lowbit.from_bytes(raw)
    with pytest.raises(ValueError, match="truncated"):
        lowbit.from_bytes(w.to_bytes()[:-1])
    with pytest.raises(ValueError, match="magic"):
        lowbit.from_bytes(b"x" * 200)
    with pytest.raises(OSError, match="cannot open"):
        lowbit.load(str(tmp_path / "missing.lbw"))
