"""A Llama-style decoder in plain PyTorch, for the examples (torch_quantize.py, torch_generate.py).

Pre-norm blocks (RMSNorm, rotary position embeddings, grouped-query attention with an optional
KV cache, SwiGLU MLP) as in Llama 3, with random weights: the examples time and compare, they do
not produce text. Every projection is an ``nn.Linear``, so ``lowbit.torch.quantize_`` swaps them.
"""
import ctypes
import math

import torch
import torch.nn.functional as F

# name: (hidden, intermediate, heads, kv_heads, head_dim, blocks, vocab), as tools/models.h
# (and the models' published configurations for the vocabulary). "tiny" is for tests.
MODELS = {
    "llama3-8b": (4096, 14336, 32, 8, 128, 32, 128256),
    "llama3.2-1b": (2048, 8192, 32, 8, 64, 16, 128256),
    "qwen2.5-0.5b": (896, 4864, 14, 2, 64, 24, 151936),
    "tiny": (128, 256, 4, 2, 32, 2, 512),
}
ROPE_BASE = 500000.0


def _openblas():
    """OpenBLAS as torch loaded it (Debian's torch runs F.linear on it), or None."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0")  # the copy already loaded, if any
    except OSError:
        return None
    return lib if hasattr(lib, "openblas_set_num_threads") else None


_OPENBLAS = _openblas()


def set_threads(threads, blas_threads=None):
    """torch's intra-op threads (LowbitLinear follows them) and OpenBLAS's, whose count is its own
    (default: as many). A float model runs its linear layers on OpenBLAS; a lowbit model only
    attention's matrix products, and OpenBLAS's pthreads pool spins for a while after each call,
    taking the core that torch's OpenMP team (lowbit's layers, the other operators) needs next:
    lowbit's models run with blas_threads=1 (LOWBIT_BLAS_THREADS), one set of threads, torch's."""
    torch.set_num_threads(threads)
    if _OPENBLAS is not None:
        _OPENBLAS.openblas_set_num_threads(threads if blas_threads is None else blas_threads)


LOWBIT_BLAS_THREADS = 1


class RMSNorm(torch.nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = torch.nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotary_tables(positions, head_dim, base=ROPE_BASE):
    """cos and sin of the rotary angles at `positions` ([tokens]): each [tokens, 1, head_dim / 2].
    Every block rotates by the same angles, so a model computes them once per forward."""
    half = head_dim // 2
    freqs = base ** (-torch.arange(half, dtype=torch.float32) / half)
    angles = (positions[:, None].float() * freqs[None, :])[:, None, :]
    return angles.cos(), angles.sin()


def rotary(x, tables):
    """x: [batch, tokens, heads, head_dim]; rotates pairs (i, i + d/2) by the angles of `tables`."""
    cos, sin = tables
    half = x.shape[-1] // 2
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)


class KVCache:
    """Keys and values of one block for up to ``length`` positions: [batch, kv_heads, length, head_dim]."""

    def __init__(self, batch, kv_heads, length, head_dim):
        self.k = torch.empty(batch, kv_heads, length, head_dim)
        self.v = torch.empty(batch, kv_heads, length, head_dim)


class DecoderBlock(torch.nn.Module):
    """Pre-norm attention (grouped-query, rotary, causal) and a SwiGLU MLP, as in Llama 3."""

    def __init__(self, hidden, inter, heads, kv_heads, head_dim):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, head_dim
        self.attn_norm, self.mlp_norm = RMSNorm(hidden), RMSNorm(hidden)
        self.q_proj = torch.nn.Linear(hidden, heads * head_dim, bias=False)
        self.k_proj = torch.nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.v_proj = torch.nn.Linear(hidden, kv_heads * head_dim, bias=False)
        self.o_proj = torch.nn.Linear(heads * head_dim, hidden, bias=False)
        self.gate_proj = torch.nn.Linear(hidden, inter, bias=False)
        self.up_proj = torch.nn.Linear(hidden, inter, bias=False)
        self.down_proj = torch.nn.Linear(inter, hidden, bias=False)

    def forward(self, x, cache=None, start=0, rope=None):
        """x: [batch, tokens, hidden] at positions start, start + 1, ...; with a cache, attends to
        the positions before start that it holds too, and stores this call's keys and values.
        rope: rotary_tables of those positions (computed here when not given)."""
        b, t, _ = x.shape
        kv, group, d = self.kv_heads, self.heads // self.kv_heads, self.head_dim
        if rope is None:
            rope = rotary_tables(torch.arange(start, start + t), d)
        h = self.attn_norm(x)
        q = rotary(self.q_proj(h).view(b, t, self.heads, d), rope)
        k = rotary(self.k_proj(h).view(b, t, kv, d), rope).transpose(1, 2)
        v = self.v_proj(h).view(b, t, kv, d).transpose(1, 2)
        if cache is not None:
            cache.k[:, :, start:start + t] = k
            cache.v[:, :, start:start + t] = v
            k, v = cache.k[:, :, :start + t], cache.v[:, :, :start + t]
        # Grouped-query attention without copying keys per head: the `group` query heads that
        # share a KV head are rows of one matrix product, [b, kv, group * t, d] @ [b, kv, d, L].
        q = q.view(b, t, kv, group, d).permute(0, 2, 3, 1, 4).reshape(b, kv, group * t, d)
        scores = q @ k.transpose(-1, -2) / math.sqrt(d)
        if t > 1:
            causal = torch.ones(t, start + t, dtype=torch.bool).triu(start + 1)
            scores = scores.masked_fill(causal.repeat(group, 1), float("-inf"))
        attn = (scores.softmax(-1) @ v).view(b, kv, group, t, d).permute(0, 3, 1, 2, 4).reshape(b, t, -1)
        x = x + self.o_proj(attn)
        h = self.mlp_norm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class Llama(torch.nn.Module):
    """Embedding, decoder blocks, final norm and a language-model head tied to the embedding (as
    Llama 3.2 1B). forward returns the logits of the last position only, as generation needs."""

    def __init__(self, hidden, inter, heads, kv_heads, head_dim, blocks, vocab):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, hidden)
        self.blocks = torch.nn.ModuleList(DecoderBlock(hidden, inter, heads, kv_heads, head_dim)
                                          for _ in range(blocks))
        self.norm = RMSNorm(hidden)
        self.lm_head = torch.nn.Linear(hidden, vocab, bias=False)
        self.lm_head.weight = self.embed.weight
        # Llama's initialization (N(0, 0.02)): the blocks' updates, not the token's own tied
        # embedding, decide the next token, so greedy choices depend on every layer.
        for p in self.parameters():
            if p.dim() == 2:
                torch.nn.init.normal_(p, std=0.02)

    def caches(self, batch, length):
        return [KVCache(batch, blk.kv_heads, length, blk.head_dim) for blk in self.blocks]

    def forward(self, tokens, caches, start):
        """tokens: [batch, t] at positions start.. -> logits [batch, vocab] of the last one."""
        x = self.embed(tokens)
        rope = rotary_tables(torch.arange(start, start + tokens.shape[1]), self.blocks[0].head_dim)
        for blk, cache in zip(self.blocks, caches):
            x = blk(x, cache, start, rope)
        return self.lm_head(self.norm(x[:, -1]))
