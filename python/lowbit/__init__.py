"""lowbit: low-bit quantized linear layers on CPUs, bit-identical on every CPU.

y[..., n] = clamp(int8(x)[..., k] · dequant(W)[n, k]^T + bias[n]), activations quantized per row
(asymmetric int8), weights groupwise with 1-8 bits. numpy in and out; torch is not needed
(``lowbit.torch`` adds ``torch.ops.lowbit``, ``LowbitLinear`` and ``quantize_``). docs/python.md.

    q, s, z = lowbit.quantize_weights(w, bits=4, group_size=32)   # w: float32 [n, k]
    pw = lowbit.pack(q, s, z, bias, bits=4, group=32)              # for this CPU
    y = pw.linear(x)                                               # x: float32 [..., k]
    pw.save("layer.lbw"); lowbit.load("layer.lbw"); lowbit.from_bytes(pw.to_bytes())
"""

import sys as _sys

from ._lowbit import (
    PackedWeights,
    _float_reference_linear,
    _reference_linear,
    _time_c_api_linear,
    explain,
    from_bytes,
    info,
    load,
    pack,
    quantize_weights,
)
from ._lowbit import repack as _repack_weights

__all__ = ["PackedWeights", "pack", "load", "save", "from_bytes", "repack", "quantize_weights",
           "info", "explain"]


def save(weights, path):
    """Writes packed weights to ``path`` (written whole or not at all)."""
    if not isinstance(weights, PackedWeights):
        raise TypeError(f"save needs lowbit.PackedWeights (got {type(weights).__name__})")
    weights.save(path)


def repack(weights, target=None):
    """The same weights in the layout ``target`` uses (None: this CPU); results are bit-identical.

    Takes ``PackedWeights`` (returns ``PackedWeights``) or a packed uint8 torch tensor (returns
    a tensor): the fix for weights packed for another CPU.
    """
    if isinstance(weights, PackedWeights):
        return _repack_weights(weights, target)
    torch = _sys.modules.get("torch")
    if torch is not None and isinstance(weights, torch.Tensor):
        from . import torch as _ops  # noqa: F401  (loads torch.ops.lowbit)
        return torch.ops.lowbit.repack(weights, target)
    raise TypeError(f"repack needs lowbit.PackedWeights or a packed torch.Tensor (got {type(weights).__name__})")
