"""Shared pieces of the Python tests: random unpacked weights, bit comparison, the float bound."""
import numpy as np


def random_weights(rng, n, k, bits, group, zeros=False, bias=False):
    """(qvals, scales, zeros or None, bias or None) with every value of the bit range possible."""
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    q = rng.integers(lo, hi + 1, size=(n, k), dtype=np.int8)
    s = (rng.random((n, k // group), dtype=np.float32) * 0.05 + 0.001).astype(np.float32)
    z = rng.integers(lo, hi + 1, size=(n, k // group), dtype=np.int8) if zeros else None
    b = rng.standard_normal(n).astype(np.float32) if bias else None
    return q, s, z, b


def same_bits(a, b):
    """Bit-identical float32 arrays (NaN payloads and signed zeros included)."""
    a, b = np.ascontiguousarray(a, np.float32), np.ascontiguousarray(b, np.float32)
    return a.shape == b.shape and np.array_equal(a.view(np.uint32), b.view(np.uint32))


def dequantize(q, s, z):
    group = q.shape[1] // s.shape[1]
    zz = 0 if z is None else np.repeat(z.astype(np.float32), group, axis=1)
    return np.repeat(s, group, axis=1) * (q.astype(np.float32) - zz)


def activation_scales(x):
    """The per-row scale of the int8 activation quantization (docs/semantics.md), in f32."""
    lo = np.minimum(np.float32(0), x.min(axis=1))
    hi = np.maximum(np.float32(0), x.max(axis=1))
    s = ((hi - lo) / np.float32(255)).astype(np.float32)
    return np.where(s == 0, np.float32(1), s)


def float_bound(x, q, s, z, yf):
    """The documented bound (docs/python.md) of |lowbit - float math| for x [m, k]: rounding x
    moves each element by at most s_x / 2, so |y - yf| <= s_x / 2 · Σ_k |w_q|, plus f32 rounding."""
    wsum = np.abs(dequantize(q, s, z)).astype(np.float64).sum(axis=1)
    return 0.5 * activation_scales(x)[:, None].astype(np.float64) * wsum[None, :] * 1.001 \
        + 1e-5 * (1.0 + np.abs(yf))
