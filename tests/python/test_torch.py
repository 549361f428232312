"""torch.ops.lowbit (pack, linear, repack, info) and lowbit.torch (LowbitLinear, quantize_, repack_)."""
import io
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import lowbit  # noqa: E402
import lowbit.torch as lt  # noqa: E402
from helpers import dequantize, float_bound, random_weights, same_bits  # noqa: E402

FOREIGN_TARGET = "aarch64-neon" if lowbit.info()["profile"]["arch"] == "x86_64" else "x86-avx2"


def packed(q, s, z, b, bits, group, target=None):
    t = (lambda a: None if a is None else torch.from_numpy(a))
    return torch.ops.lowbit.pack(t(q), t(s), t(z), t(b), bits, group, target)


def layer(seed=0, n=24, k=64, bits=4, group=32, zeros=True, bias=True):
    q, s, z, b = random_weights(np.random.default_rng(seed), n, k, bits, group, zeros, bias)
    return (q, s, z, b), packed(q, s, z, b, bits, group)


@pytest.mark.parametrize("bits", range(1, 9))
@pytest.mark.parametrize("zeros,bias,clamp", [(False, False, None), (True, True, None), (False, True, (-0.5, 0.75)),
                                              (True, False, (None, 0.25)), (False, False, (0.0, None))])
def test_linear_is_bit_exact_with_the_scalar_reference(bits, zeros, bias, clamp):
    n, k, group = 40, 256, 64
    (q, s, z, b), p = layer(bits, n, k, bits, group, zeros, bias)
    x = torch.randn(11, k, generator=torch.Generator().manual_seed(bits))
    cmin, cmax = clamp or (None, None)
    ref = lowbit._reference_linear(q, s, z, b, bits, group, x.numpy(), cmin, cmax)
    for threads in (1, 2, 3):
        assert same_bits(torch.ops.lowbit.linear(x, p, cmin, cmax, threads).numpy(), ref)  # lowbit's pool
    old = torch.get_num_threads()
    try:
        for threads in (1, 2, 3):  # torch's threads
            torch.set_num_threads(threads)
            assert same_bits(torch.ops.lowbit.linear(x, p, cmin, cmax).numpy(), ref)
    finally:
        torch.set_num_threads(old)
    if clamp is None:
        yf = lowbit._float_reference_linear(q, s, z, b, bits, group, x.numpy())
        assert np.all(np.abs(ref.astype(np.float64) - yf) <= float_bound(x.numpy(), q, s, z, yf))


def test_the_same_bits_as_the_numpy_api_and_nan_rows_stay_their_own():
    (q, s, z, b), p = layer(1)
    x = torch.randn(5, 64)
    x[2, 7] = float("inf")
    y = torch.ops.lowbit.linear(x, p)
    assert same_bits(y.numpy(), lowbit.pack(q, s, z, b, 4, 32).linear(x.numpy()))
    assert torch.isnan(y[2]).all() and not torch.isnan(y[[0, 1, 3, 4]]).any()


def test_leading_dimensions_and_non_contiguous_input():
    (q, s, z, b), p = layer(2)
    x = torch.randn(2, 3, 4, 64)
    y = torch.ops.lowbit.linear(x, p)
    assert y.shape == (2, 3, 4, 24) and y.dtype == torch.float32 and y.is_contiguous()
    assert same_bits(y.reshape(24, 24).numpy(), lowbit._reference_linear(q, s, z, b, 4, 32, x.reshape(24, 64).numpy()))
    assert same_bits(torch.ops.lowbit.linear(x[1, 2, 3], p).numpy(), y[1, 2, 3].numpy())  # [k] -> [n]
    xt = torch.randn(64, 5).t()  # column-major
    xs = torch.randn(5, 128)[:, ::2]  # strided
    xe = torch.randn(1, 64).expand(3, 64)  # stride 0
    for xn in (xt, xs, xe):
        assert not xn.is_contiguous()
        assert same_bits(torch.ops.lowbit.linear(xn, p).numpy(), torch.ops.lowbit.linear(xn.contiguous(), p).numpy())


def test_zero_rows_give_an_empty_result():
    _, p = layer(3)
    assert torch.ops.lowbit.linear(torch.empty(0, 64), p).shape == (0, 24)
    assert torch.ops.lowbit.linear(torch.empty(3, 0, 64), p).shape == (3, 0, 24)
    with pytest.raises(RuntimeError, match=r"x has shape \[0, 63\]"):  # k is still checked
        torch.ops.lowbit.linear(torch.empty(0, 63), p)


def threads_now():
    return len(os.listdir("/proc/self/task"))


def test_many_tasks_on_torchs_threads_are_bit_exact():
    # Enough tasks that each of torch's threads takes some, whoever comes first.
    (q, s, z, b), p = layer(6, n=4096, k=512)
    old = torch.get_num_threads()
    try:
        for m in (1, 7, 64):
            x = torch.randn(m, 512, generator=torch.Generator().manual_seed(m))
            ref = lowbit._reference_linear(q, s, z, b, 4, 32, x.numpy())
            for threads in (2, 3):
                torch.set_num_threads(threads)
                for _ in range(5):
                    assert same_bits(torch.ops.lowbit.linear(x, p).numpy(), ref)
    finally:
        torch.set_num_threads(old)


def test_thread_count_is_honoured():
    # In a fresh process: without a count the op runs on torch's intra-op threads, which torch
    # starts for torch.set_num_threads' count (less the caller, which works too); an explicit
    # count starts lowbit's pool for it on first use.
    code = """
import os, numpy as np, torch, lowbit.torch
threads = lambda: len(os.listdir("/proc/self/task"))
q = np.ones((512, 256), np.int8); s = np.full((512, 8), 0.01, np.float32)
p = torch.ops.lowbit.pack(torch.from_numpy(q), torch.from_numpy(s), None, None, 4, 32)
x = torch.randn(64, 256)
torch.set_num_threads(7)
before = threads(); torch.ops.lowbit.linear(x, p); on_torch = threads() - before
before = threads(); torch.ops.lowbit.linear(x, p, None, None, 5); on_pool = threads() - before
print(on_torch, on_pool)
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd="/",
                       env=dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(lowbit.__file__))))
    assert r.returncode == 0, r.stderr
    on_torch, on_pool = map(int, r.stdout.split())
    assert on_torch == 6 and on_pool in (4, 5), r.stdout


def test_argument_errors_name_the_bad_value():
    (q, s, z, b), p = layer(5)
    x = torch.randn(2, 64)
    cases = [
        (lambda: torch.ops.lowbit.linear(x.double(), p), "x must be Float .got Double"),
        (lambda: torch.ops.lowbit.linear(x.half(), p), "x must be Float .got Half"),
        (lambda: torch.ops.lowbit.linear(torch.randn(2, 63), p), r"x has shape \[2, 63\], expected \[\.\.\., 64\]"),
        (lambda: torch.ops.lowbit.linear(torch.tensor(1.0), p), "x has shape"),
        (lambda: torch.ops.lowbit.linear(x.to_sparse(), p), "dense"),
        (lambda: torch.ops.lowbit.linear(x, p.float()), "packed must be Byte .got Float"),
        (lambda: torch.ops.lowbit.linear(x, p.view(1, -1)), "packed must have 1 dimensions"),
        (lambda: torch.ops.lowbit.linear(x, torch.stack([p, p], 1)[:, 0]), "packed must be contiguous"),
        (lambda: torch.ops.lowbit.linear(x, torch.cat([p[:1], p])[1:]), "64-byte aligned"),
        (lambda: torch.ops.lowbit.linear(x, p[:-1].clone()), "truncated"),
        (lambda: torch.ops.lowbit.linear(x, torch.zeros(300, dtype=torch.uint8)), "magic"),
        (lambda: torch.ops.lowbit.linear(x, p, None, None, 0), r"num_threads = 0 is outside \[1, 1024\]"),
        (lambda: torch.ops.lowbit.linear(x, p, 1.0, 0.0), "clamp_min 1 > clamp_max 0"),
        (lambda: torch.ops.lowbit.linear(x, p, float("nan")), "NaN"),
        (lambda: packed(q, s, z, b, 9, 32), r"bits = 9 is outside \[1, 8\]"),
        (lambda: packed(q, s, z, b, 4, 48), "group = 48 must be positive and divide k = 64"),
        (lambda: packed(q, s[:, :1], z, b, 4, 32), r"scales has shape \[24, 1\], expected \[24, 2\]"),
        (lambda: packed(q, s, z[:5], b, 4, 32), "zeros has shape"),
        (lambda: packed(q, s, z, b[:5], 4, 32), "bias has shape"),
        (lambda: packed(q.astype(np.int16), s, z, b, 4, 32), "qvals must be Char .got Short"),
        (lambda: packed(q, s.astype(np.float64), z, b, 4, 32), "scales must be Float .got Double"),
        (lambda: packed(np.full_like(q, 8), s, z, b, 4, 32), r"qvals\[0\].* = 8 is outside the 4-bit range"),
        (lambda: packed(q, s, z, b, 4, 32, "x86-avx9000"), "x86-avx9000"),
        (lambda: torch.ops.lowbit.linear(torch.empty(2, 64, device="meta"), p), "x must be on the CPU .got meta"),
        (lambda: torch.ops.lowbit.linear(x, p.to("meta")), "packed must be on the CPU .got meta"),
    ]
    for call, message in cases:
        with pytest.raises(RuntimeError, match=message):
            call()


def test_corrupt_buffers_are_rejected_and_in_place_changes_revalidated():
    (q, s, z, b), p = layer(6)
    x = torch.randn(3, 64)
    y = torch.ops.lowbit.linear(x, p)
    bad = p.clone()
    bad[300] ^= 1
    with pytest.raises(RuntimeError, match="not valid lowbit packed weights.*checksum"):
        torch.ops.lowbit.linear(x, bad)
    p[300] ^= 1  # an in-place change of a tensor already used: its version moves on
    with pytest.raises(RuntimeError, match="checksum"):
        torch.ops.lowbit.linear(x, p)
    p[300] ^= 1
    assert same_bits(torch.ops.lowbit.linear(x, p).numpy(), y.numpy())
    (q, s, z, b), other = layer(60)
    p.copy_(other)  # a different valid buffer of the same size
    assert same_bits(torch.ops.lowbit.linear(x, p).numpy(), lowbit._reference_linear(q, s, z, b, 4, 32, x.numpy()))


def test_copies_of_packed_tensors_work_in_place_and_die_cleanly():
    (q, s, z, b), p = layer(7)
    x = torch.randn(3, 64)
    y = torch.ops.lowbit.linear(x, p)
    buf = io.BytesIO()
    torch.save(p, buf)
    for c in (p.clone(), torch.load(io.BytesIO(buf.getvalue())), torch.from_numpy(p.numpy().copy()),
              torch.frombuffer(bytearray(lowbit.pack(q, s, z, b, 4, 32).to_bytes()), dtype=torch.uint8)):
        if c.data_ptr() % 64 == 0:  # numpy and bytearray memory may be less aligned
            assert same_bits(torch.ops.lowbit.linear(x, c).numpy(), y.numpy())
    for _ in range(50):  # new storages at reused addresses are validated afresh
        (q, s, z, b), p2 = layer(8, zeros=False)
        assert same_bits(torch.ops.lowbit.linear(x, p2).numpy(), lowbit._reference_linear(q, s, z, b, 4, 32, x.numpy()))
        del p2
    with torch.inference_mode():
        pi = p.clone()
        assert same_bits(torch.ops.lowbit.linear(x, pi).numpy(), y.numpy())


def test_weights_packed_for_another_cpu_say_to_repack_and_repack_fixes_them():
    (q, s, z, b), here = layer(9)
    foreign = packed(q, s, z, b, 4, 32, FOREIGN_TARGET)
    x = torch.randn(2, 64)
    with pytest.raises(RuntimeError, match=r"repack.*lowbit\.repack\(packed\)"):
        torch.ops.lowbit.linear(x, foreign)
    for fixed in (lowbit.repack(foreign), torch.ops.lowbit.repack(foreign)):
        assert fixed.dtype == torch.uint8 and lt.packed_info(fixed)["layout"] == lt.packed_info(here)["layout"]
        assert same_bits(torch.ops.lowbit.linear(x, fixed).numpy(), torch.ops.lowbit.linear(x, here).numpy())


def test_backward_through_linear_raises():
    _, p = layer(10)
    x = torch.randn(2, 64, requires_grad=True)
    y = torch.ops.lowbit.linear(x, p)
    assert y.requires_grad
    with pytest.raises(RuntimeError, match="not implemented"):
        y.sum().backward()
    with torch.no_grad():
        assert not torch.ops.lowbit.linear(x, p).requires_grad


class Block(torch.nn.Module):
    def __init__(self, d=64, hidden=128, odd=40):
        super().__init__()
        self.up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden, d, bias=False)
        self.head = torch.nn.Linear(d, odd)
        self.odd = torch.nn.Linear(odd, 8)  # in_features 40: not a multiple of 32
        self.attn = torch.nn.MultiheadAttention(d, 4, batch_first=True)

    def forward(self, x):
        h = x + self.down(torch.relu(self.up(x)))
        h = h + self.attn(h, h, h, need_weights=False)[0]
        return self.odd(self.head(h))


def test_quantize_swaps_eligible_layers_keeps_the_output_within_bound_and_leaves_the_rest_alone():
    torch.manual_seed(0)
    model = Block().eval()
    x = torch.randn(2, 5, 64)
    with torch.no_grad():
        want = model(x)
    keep = {name: (m, m.weight.detach().clone()) for name, m in model.named_modules()
            if name in ("odd", "head", "attn.out_proj")}
    floats = {name: m for name, m in model.named_modules() if name in ("up", "down")}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert lt.quantize_(model, bits=8, group_size=32, filter_fn=None) is model
    assert any("odd (in_features 40)" in str(w.message) for w in caught)
    assert isinstance(model.up, lt.LowbitLinear) and isinstance(model.down, lt.LowbitLinear)
    assert isinstance(model.head, lt.LowbitLinear)
    assert model.odd is keep["odd"][0] and torch.equal(model.odd.weight, keep["odd"][1])
    assert model.attn.out_proj is keep["attn.out_proj"][0]
    # Each swapped layer, on the inputs it saw inside the model, is within the bound of float
    # math on lowbit's quantized weights; and those are within half a step of the float weights.
    seen = {}
    hooks = [getattr(model, n).register_forward_hook(lambda mod, i, o, n=n: seen.__setitem__(n, (i[0], o)))
             for n in ("up", "down")]
    with torch.no_grad():
        got = model(x)
    for h in hooks:
        h.remove()
    for name, lin in floats.items():
        w = lin.weight.detach().numpy()
        q, s, z = lowbit.quantize_weights(w, 8, 32, scale_format="bf16")
        assert np.all(np.abs(dequantize(q, s, z) - w) <= np.repeat(s, 32, axis=1) * 0.5001)
        xin, out = (t.reshape(-1, t.shape[-1]).numpy() for t in seen[name])
        bias = None if lin.bias is None else lin.bias.detach().numpy()
        yf = lowbit._float_reference_linear(q, s, z, bias, 8, 32, xin)
        assert np.all(np.abs(out.astype(np.float64) - yf) <= float_bound(xin, q, s, z, yf))
    assert got.shape == want.shape
    assert (got - want).norm() / want.norm() < 0.02  # 8-bit weights and activations


def test_filter_fn_chooses_layers_and_rejects_ineligible_choices():
    torch.manual_seed(1)
    model = Block()
    up, down = model.up, model.down
    lt.quantize_(model, bits=4, group_size=32, zero_points=True, filter_fn=lambda m, fqn: fqn == "up")
    assert isinstance(model.up, lt.LowbitLinear) and model.up.zero_points and model.up.bits == 4
    assert model.down is down and model.head.__class__ is torch.nn.Linear
    with pytest.raises(ValueError, match="odd: in_features 40 is not a multiple of group_size 32"):
        lt.quantize_(Block(), filter_fn=lambda m, fqn: fqn == "odd")
    with pytest.raises(ValueError, match="not an nn.Linear"):
        lt.quantize_(Block(), filter_fn=lambda m, fqn: fqn == "attn")
    shared = torch.nn.Linear(32, 32)
    seq = torch.nn.Sequential(shared, torch.nn.ReLU(), shared)
    lt.quantize_(seq, group_size=16)
    assert seq[0] is seq[2] and isinstance(seq[0], lt.LowbitLinear)
    assert up is not model.up


def quantized_block(seed, **kwargs):
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return lt.quantize_(Block().eval(), **kwargs)


def test_state_dict_and_torch_save_round_trip_bit_exactly():
    model = quantized_block(2, bits=3, group_size=32, zero_points=True)
    x = torch.randn(3, 64)
    with torch.no_grad():
        want = model(x)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    other = quantized_block(3, bits=3, group_size=32, zero_points=True)
    other.load_state_dict(torch.load(io.BytesIO(buf.getvalue())))
    with torch.no_grad():
        assert same_bits(other(x).numpy(), want.numpy())
    assert torch.equal(other.up.packed, model.up.packed) and other.up.packed.data_ptr() != model.up.packed.data_ptr()
    buf = io.BytesIO()
    torch.save(model, buf)
    with torch.no_grad():
        assert same_bits(torch.load(io.BytesIO(buf.getvalue()))(x).numpy(), want.numpy())
    # A state dict packed for another layout (another CPU's) loads too: the buffer is replaced.
    other.up = lt.LowbitLinear.from_packed(torch.ops.lowbit.repack(other.up.packed, "portable"))
    other.load_state_dict(model.state_dict())
    with torch.no_grad():
        assert same_bits(other(x).numpy(), want.numpy())


def test_a_corrupt_or_mismatched_buffer_in_a_state_dict_is_rejected_on_load():
    model = quantized_block(4)
    state = model.state_dict()
    state["up.packed"] = state["up.packed"].clone()
    state["up.packed"][500] ^= 4
    with pytest.raises(RuntimeError, match="up.packed.*checksum"):
        quantized_block(5).load_state_dict(state)
    state = model.state_dict()
    state["up.packed"] = state["head.packed"]
    with pytest.raises(RuntimeError, match="up.packed: packed weights are 40x64, this layer is 128x64"):
        quantized_block(5).load_state_dict(state)
    state = model.state_dict()
    del state["down.packed"]
    with pytest.raises(RuntimeError, match="Missing key.*down.packed"):
        quantized_block(5).load_state_dict(state)
    state = model.state_dict()
    state["up.extra"] = torch.zeros(1)
    with pytest.raises(RuntimeError, match="Unexpected key.*up.extra"):
        quantized_block(5).load_state_dict(state)


def test_lowbit_linear_module():
    torch.manual_seed(6)
    lin = torch.nn.Linear(64, 24)
    m = lt.LowbitLinear(lin, bits=5, group_size=16, scale_format="f32", num_threads=1)
    assert (m.in_features, m.out_features, m.bits, m.group_size, m.zero_points) == (64, 24, 5, 16, False)
    assert "in_features=64, out_features=24, bits=5, group_size=16" in repr(m)
    q, s, z = lowbit.quantize_weights(lin.weight.detach().numpy(), 5, 16)
    x = torch.randn(4, 64)
    ref = lowbit._reference_linear(q, s, z, lin.bias.detach().numpy(), 5, 16, x.numpy())
    with torch.no_grad():
        assert same_bits(m(x).numpy(), ref)
    assert same_bits(lt.LowbitLinear.from_packed(m.packed)(x).detach().numpy(), ref)
    with pytest.raises(TypeError, match="nn.Linear"):
        lt.LowbitLinear(torch.nn.Conv1d(4, 4, 1))
    with pytest.raises(ValueError, match="group_size 48 does not divide in_features 64"):
        lt.LowbitLinear(lin, group_size=48)
    with pytest.raises(RuntimeError, match="x must be Float .got BFloat16"):
        m(x.bfloat16())


def test_repack_model_in_place():
    model = quantized_block(7, target="portable")
    assert lt.packed_info(model.up.packed)["layout"].startswith("portable")
    x = torch.randn(2, 64)
    with torch.no_grad():
        want = model(x)
        lt.repack_(model)
        assert lt.packed_info(model.up.packed)["layout"] == lowbit.explain(n=128, k=64, m=1, bits=4, group=32)["layout"]["name"]
        assert same_bits(model(x).numpy(), want.numpy())


def test_torchscript_scripts_traces_saves_and_loads_quantized_models():
    torch.manual_seed(8)
    model = lt.quantize_(torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16)),
                         group_size=16)
    x = torch.randn(3, 64)
    with torch.no_grad():
        want = model(x)
        for compiled in (torch.jit.script(model), torch.jit.trace(model, x)):
            buf = io.BytesIO()
            torch.jit.save(compiled, buf)
            loaded = torch.jit.load(io.BytesIO(buf.getvalue()))
            assert same_bits(compiled(x).numpy(), want.numpy()) and same_bits(loaded(x).numpy(), want.numpy())
