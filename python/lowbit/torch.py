"""lowbit for PyTorch: ``torch.ops.lowbit``, ``LowbitLinear`` and ``quantize_`` (docs/python.md).

Importing this module loads the op library:

    torch.ops.lowbit.pack(qvals, scales, zeros, bias, bits, group, target=None) -> uint8 tensor
    torch.ops.lowbit.linear(x, packed, clamp_min=None, clamp_max=None, num_threads=None)
    torch.ops.lowbit.repack(packed, target=None) -> uint8 tensor
    torch.ops.lowbit.info(packed) -> str (JSON; packed_info() parses it)
"""

import json
import os
import warnings

import torch

from . import _lowbit

_LIBRARY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_torch_ops.so")
if not os.path.exists(_LIBRARY):
    raise ImportError(f"lowbit.torch: {_LIBRARY} was not built (configure lowbit with libtorch-dev and "
                      "python3-torch installed, or -DLOWBIT_PYTHON=ON to require them)")
try:
    torch.ops.load_library(_LIBRARY)
except OSError as e:
    raise ImportError(f"lowbit.torch: cannot load {_LIBRARY} into torch {torch.__version__} "
                      f"(built against another libtorch?): {e}") from e

__all__ = ["LowbitLinear", "quantize_", "repack_", "packed_info"]


def packed_info(packed):
    """The header of a packed tensor as a dict: the fields of ``lowbit inspect --json``.
    Validates the whole buffer (RuntimeError when it is corrupt)."""
    return json.loads(torch.ops.lowbit.info(packed))


class LowbitLinear(torch.nn.Module):
    """An ``nn.Linear`` with lowbit-packed weights: ``forward(x)`` is ``torch.ops.lowbit.linear``.

    ``LowbitLinear(linear, bits=4, group_size=32, zero_points=False)`` quantizes the layer's weight
    with lowbit's quantizer (symmetric, or asymmetric with int8 zero points when ``zero_points``;
    1-8 bits; groups of ``group_size`` along ``in_features``; scales rounded to bf16 unless
    ``scale_format="f32"``) and packs it for this CPU (or ``target``). The packed bytes are the
    buffer ``packed``: ``state_dict``, ``torch.save`` and ``torch.load`` carry them, and loading
    validates them again. x must be float32 on the CPU; inference only (backward raises).
    ``num_threads``: None runs on torch's intra-op threads (``torch.get_num_threads()``), a
    number on lowbit's own pool of that many threads (docs/python.md).
    """

    def __init__(self, linear, bits=4, group_size=32, zero_points=False, *, scale_format="bf16",
                 target=None, num_threads=None):
        super().__init__()
        if not isinstance(linear, torch.nn.Linear):
            raise TypeError(f"LowbitLinear needs an nn.Linear (got {type(linear).__name__})")
        weight = linear.weight.detach()
        if weight.device.type != "cpu" or not weight.is_floating_point():
            raise ValueError(f"LowbitLinear needs a floating-point weight on the CPU "
                             f"(got {weight.dtype} on {weight.device})")
        if group_size <= 0 or linear.in_features % group_size:
            raise ValueError(f"group_size {group_size} does not divide in_features {linear.in_features}")
        w = weight.to(torch.float32).contiguous().numpy()
        qvals, scales, zeros = _lowbit.quantize_weights(w, bits, group_size, asymmetric=bool(zero_points),
                                                        scale_format=scale_format)
        bias = None if linear.bias is None else linear.bias.detach().to(torch.float32)
        packed = torch.ops.lowbit.pack(torch.from_numpy(qvals), torch.from_numpy(scales),
                                       None if zeros is None else torch.from_numpy(zeros), bias,
                                       bits, group_size, target)
        self.num_threads = num_threads
        self._set_packed(packed)

    @classmethod
    def from_linear(cls, linear, bits=4, group_size=32, zero_points=False, **kwargs):
        return cls(linear, bits, group_size, zero_points, **kwargs)

    @classmethod
    def from_packed(cls, packed, num_threads=None):
        """A layer around a packed uint8 tensor (from torch.ops.lowbit.pack), validated."""
        self = cls.__new__(cls)
        torch.nn.Module.__init__(self)
        self.num_threads = num_threads
        self._set_packed(packed)
        return self

    def _set_packed(self, packed):
        info = packed_info(packed)  # validates
        self.in_features, self.out_features = info["k"], info["n"]
        self.bits, self.group_size, self.zero_points = info["bits"], info["group"], info["zeros"]
        self.register_buffer("packed", packed)

    def forward(self, x):
        return torch.ops.lowbit.linear(x, self.packed, None, None, self.num_threads)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, bits={self.bits}, "
                f"group_size={self.group_size}, zero_points={self.zero_points}")

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        # As nn.Module's, except that the packed buffer is replaced rather than copied into (its
        # size depends on the layout, and another CPU's may differ) once it is validated (both
        # checksums) and found to have this layer's shape.
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs)
        key = prefix + "packed"
        if strict:
            unexpected_keys.extend(k for k in state_dict if k.startswith(prefix) and k != key
                                   and k[len(prefix):].split(".", 1)[0] not in self._modules)
        if key not in state_dict:
            if strict:
                missing_keys.append(key)
            return
        packed = state_dict[key]
        if not isinstance(packed, torch.Tensor):
            error_msgs.append(f"{key}: expected a packed uint8 tensor, got {type(packed).__name__}")
            return
        packed = packed.detach().clone()
        try:
            info = packed_info(packed)
        except RuntimeError as e:
            error_msgs.append(f"{key}: {e}")
            return
        if (info["n"], info["k"]) != (self.out_features, self.in_features):
            error_msgs.append(f"{key}: packed weights are {info['n']}x{info['k']}, this layer is "
                              f"{self.out_features}x{self.in_features} (out_features x in_features)")
            return
        self._set_packed(packed)


def _eligible(module):
    # MultiheadAttention reads out_proj.weight directly; torch marks that layer so quantizers skip it.
    return (isinstance(module, torch.nn.Linear)
            and not isinstance(module, torch.nn.modules.linear.NonDynamicallyQuantizableLinear))


def quantize_(model, bits=4, group_size=32, zero_points=False, filter_fn=None, *, scale_format="bf16",
              target=None):
    """Replaces every eligible ``nn.Linear`` of ``model`` by a ``LowbitLinear``, in place (like
    torchao's ``quantize_``); returns ``model``.

    ``filter_fn(module, fqn) -> bool`` chooses the layers (default: every ``nn.Linear`` except
    MultiheadAttention's out_proj). A chosen layer whose ``in_features`` is not a multiple of
    ``group_size`` is an error; without ``filter_fn`` such layers stay float, with a warning naming
    them. A layer shared by several parents is quantized once.
    """
    chosen, kept = [], []
    for fqn, module in model.named_modules():
        if filter_fn is not None:
            if not filter_fn(module, fqn):
                continue
            if not isinstance(module, torch.nn.Linear):
                raise ValueError(f"quantize_: filter_fn chose {fqn or 'the model'}, a "
                                 f"{type(module).__name__}, not an nn.Linear")
        elif not _eligible(module):
            continue
        if group_size <= 0 or module.in_features % group_size:
            if filter_fn is not None:
                raise ValueError(f"quantize_: {fqn}: in_features {module.in_features} is not a multiple "
                                 f"of group_size {group_size}")
            kept.append(f"{fqn} (in_features {module.in_features})")
            continue
        chosen.append(module)
    if kept:
        warnings.warn(f"lowbit.torch.quantize_: kept {len(kept)} nn.Linear layer(s) in float, their "
                      f"in_features not a multiple of group_size {group_size}: {', '.join(kept)}")
    if model in chosen:
        raise ValueError("quantize_: the model itself is an nn.Linear; use LowbitLinear(model) instead")
    made = {}
    for parent in list(model.modules()):
        for name, child in list(parent._modules.items()):  # every slot: a shared child is in several
            if any(child is c for c in chosen):
                if id(child) not in made:
                    made[id(child)] = LowbitLinear(child, bits, group_size, zero_points,
                                                   scale_format=scale_format, target=target)
                setattr(parent, name, made[id(child)])
    return model


def repack_(model, target=None):
    """Repacks every LowbitLinear of ``model`` for this CPU (or ``target``), in place: the fix for
    a model whose weights were packed on another machine. Results are bit-identical."""
    for module in model.modules():
        if isinstance(module, LowbitLinear):
            module.packed = torch.ops.lowbit.repack(module.packed, target)
    return model
