// The x86 table-lookup (LUT) micro-kernel family, written once over a traits struct
// (avx2/lut_traits.h, avx512/lut_traits.h) and instantiated in each ISA's translation unit.
// docs/lut-kernels.md has the design and the measurements.
//
// Exact arithmetic (DESIGN §1). With x' = qx - zx (|x'| <= 255), u = qw + o (o = 2^(bits-1))
// and cz = o + zw, per row, column and group of k values:
//   d = Σ (qx - zx)(qw - zw) = Σ u·x' - cz·Ex,   Ex = Σ x'
//   Σ u·x' = Σ_p 2^p Σ_j T_j[idx(p, j)]   (bit planes p of u, k4 groups j)
// where T_j[i] = Σ_{b<4} bit b of i · x'[4j+b], and idx(p, j) is the nibble of bits p of the
// column's four u at group j: the layout stores exactly those nibbles (format/layout.h,
// lut_k4). The packed activations hold T' = T + kLutBias (0..2040) split into T' & 31 and
// T' >> 5, one vpshufb table each (ops/lhs_pack.h). Per index vector of kCols columns, one
// vpshufb per table looks up every column at once. The lookups are summed as bytes (exact:
// 4 lookups of <= 31, resp. <= 63, stay below 256); every 16 k the two byte sums of a column
// are interleaved into (lo, hi) pairs and vpmaddubsw by (2^p, 32·2^p) adds 2^p·ΣT' (<= 16320,
// no saturation) into uint16 sums, which stay exact while (2^bits - 1)·2040·(k/4) < 2^16
// (kWidenK), then widen into int32. So
//   d = Σ_p 2^p Σ T' - kLutBias·(group/4)·(2^bits - 1) - cz·Ex
// exactly, and per group acc = fma((float) d, s_w, acc), y = fma(acc, s_x, bias), clamp.
// 4-bit weights would need the uint16 sums widened every 8 k: the family stops at 3 bits.
//
// Everything has internal linkage (common.h): each ISA TU gets its own copy.
#pragma once

#include "kernels/x86/common.h"

namespace lowbit {
namespace x86 {
namespace {

// k values whose lookups the uint16 sums hold exactly (above): a multiple of 16.
template <int BITS>
constexpr int kWidenK = BITS == 1 ? 128 : BITS == 2 ? 32 : 16;

// The parts of one LUT LHS block of MR rows (ops/lhs_pack.h).
struct LutLhs {
  const float* sx;
  const int32_t* pairs;   // [k / sum block][MR]: -zx | -Ex << 16
  const uint8_t* tables;  // [k / 4][MR][kLutTableBytes]
};
template <int MR>
inline LutLhs lut_lhs_view(const GemmShape& shape, const UKernelArgs& a) {
  const LhsBlockLayout l =
      lhs_block_layout(LhsFormat{MR, kKr, LhsKind::lut4}, size_t(shape.k), size_t(shape.geo->groups));
  return {lhs_scales(a.lhs), lhs_pairs(a.lhs, l), lhs_tables(a.lhs, l)};
}

// The lookups of 16 k (two k8 steps, 4 per plane) for NP panels, added into the uint16 sums
// (lo, hi pairs of the low, resp. high 8 bytes of each 16-byte lane: ab[q][0], ab[q][1]).
// at[q]: panel q's index vectors of the first step (one per plane); tab: the tables of the
// step's first k4 group.
template <class T, int BITS, int NP>
LOWBIT_X86_INLINE void lut_chunk(const uint8_t* const* at, const uint8_t* tab, typename T::V (&ab)[NP][2],
                                 typename T::V nib) {
  using V = typename T::V;
  V lo[NP][BITS], hi[NP][BITS];
  static_for<2>([&](auto t) LOWBIT_X86_LAMBDA {
    const uint8_t* tt = tab + t * 2 * kLutTableBytes;
    const V tl0 = T::table(tt), th0 = T::table(tt + 16);
    const V tl1 = T::table(tt + kLutTableBytes), th1 = T::table(tt + kLutTableBytes + 16);
    static_for<BITS>([&](auto p) LOWBIT_X86_LAMBDA {
      static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
        const V v = T::load_packed(at[q] + (t * BITS + p) * T::kCols);
        const V i0 = T::and_(v, nib), i1 = T::and_(T::template srli16<4>(v), nib);
        const V l = T::add8(T::shuffle(tl0, i0), T::shuffle(tl1, i1));
        const V h = T::add8(T::shuffle(th0, i0), T::shuffle(th1, i1));
        lo[q][p] = t == 0 ? l : T::add8(lo[q][p], l);
        hi[q][p] = t == 0 ? h : T::add8(hi[q][p], h);
      });
    });
  });
  static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
    static_for<BITS>([&](auto p) LOWBIT_X86_LAMBDA {
      // (lo, hi) · (2^p, 32·2^p); from p = 2 on, (1, 32) shifted (a byte cannot hold 128).
      constexpr int kW = 1 << (p < 2 ? int(p) : 0);
      const V w = T::set1_16(int16_t(kW | (32 * kW) << 8));
      static_for<2>([&](auto h) LOWBIT_X86_LAMBDA {
        V x = T::maddubs(h == 0 ? T::unpacklo8(lo[q][p], hi[q][p]) : T::unpackhi8(lo[q][p], hi[q][p]), w);
        if constexpr (p >= 2) x = T::template slli16<p>(x);
        ab[q][h] = T::add16(ab[q][h], x);
      });
    });
  });
}

// Calls f(GS) with the group size as a compile-time constant at the common sizes (the group
// step is then straight-line code), else GS = 0: read at run time.
template <class F>
LOWBIT_X86_INLINE void with_lut_group(int group_size, F&& f) {
  switch (group_size) {
    case 32: return f(std::integral_constant<int, 32>{});
    case 64: return f(std::integral_constant<int, 64>{});
    case 128: return f(std::integral_constant<int, 128>{});
    default: return f(std::integral_constant<int, 0>{});
  }
}

// One row, NP panels p0, p0 + ps, ...: a panel is 4 runs of T::kNr columns, d and the f32 sums
// one vector per run. BITS: 1..3 (kWidenK); GS: the group size, or 0 (with_lut_group).
template <class T, int BITS, int NP, int GS>
inline void lut_gemv_panels(const PackedGeometry& g, const LutLhs& lhs, const UKernelArgs& a, int p0, int ps) {
  using V = typename T::V;
  using F = typename T::F;
  constexpr int kChunks = kWidenK<BITS> / 16;
  const int gs = GS > 0 ? GS : g.group_size;
  const int chunks = gs / 16, o = 1 << (BITS - 1);
  const int blocks = GS > 0 ? 1 : gs / col_sum_block(gs);  // the LHS pairs' Ex (one block up to 128 k)
  // The lookups' offset over one group, every plane weighted by 2^p.
  const int32_t bias = kLutBias * (gs / 4) * ((1 << BITS) - 1);
  const V nib = T::set1_8(0x0F), low16 = T::set1_32(0xFFFF);
  const uint8_t* rec[NP];
  static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA { rec[q] = a.rhs + size_t(p0 + q * ps) * g.panel_bytes; });
  const uint8_t* tab = lhs.tables;
  const int32_t* pairs = lhs.pairs;
  F facc[NP][4];
  static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA { static_for<4>([&](auto r) LOWBIT_X86_LAMBDA { facc[q][r] = T::fzero(); }); });
  for (int grp = 0; grp < g.groups; ++grp) {
    int32_t ex = 0;
    for (int s = 0; s < blocks; ++s) ex -= pairs[s] >> 16;
    pairs += blocks;
    V d[NP][4];
    const V start = T::set1_32(-bias - (g.has_zeros ? 0 : o * ex));
    static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
      static_for<4>([&](auto r) LOWBIT_X86_LAMBDA {
        // cz·Ex in int32 (vpmulld): exact modulo 2^32, as d is.
        d[q][r] = g.has_zeros ? T::sub32(start, T::mul32(T::cz_cols(rec[q] + g.zeros_offset + r * T::kNr, o), T::set1_32(ex)))
                              : start;
      });
    });
    const uint8_t* at[NP];
    static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA { at[q] = rec[q]; });
    for (int c0 = 0; c0 < chunks; c0 += kChunks) {
      V ab[NP][2];
      static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA { ab[q][0] = ab[q][1] = T::zero(); });
      const int c1 = min_i(c0 + kChunks, chunks);
#pragma GCC unroll 8
      for (int c = c0; c < c1; ++c) {
        lut_chunk<T, BITS, NP>(at, tab, ab, nib);
        tab += 4 * kLutTableBytes;
        static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA { at[q] += 2 * BITS * T::kCols; });
      }
      // Run r of the panel: the even (r = 0, 2) or odd (1, 3) halves of the 32-bit lanes of
      // ab[q][r / 2] (format/layout.h, lut_byte).
      static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
        static_for<4>([&](auto r) LOWBIT_X86_LAMBDA {
          const V half = r % 2 == 0 ? T::and_(ab[q][r / 2], low16) : T::template srli32<16>(ab[q][r / 2]);
          d[q][r] = T::add32(d[q][r], half);
        });
      });
    }
    const bool bf16 = g.scale_format == ScaleFormat::bf16;
    static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
      F sw[4];
      T::load_scales4(rec[q] + g.scales_offset, bf16, sw);
      static_for<4>([&](auto r) LOWBIT_X86_LAMBDA { facc[q][r] = T::fmadd(T::cvt(d[q][r]), sw[r], facc[q][r]); });
      rec[q] += g.record_bytes;
    });
  }
  const Lhs out{lhs.sx, nullptr, nullptr, nullptr};  // store_row reads the row's s_x
  static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
    static_for<4>([&](auto r) LOWBIT_X86_LAMBDA {
      const int run = (p0 + q * ps) * 4 + r;  // kNr columns each
      if (size_t(run) * T::kNr < a.n) store_row<T>(out, a, run, 0, facc[q][r]);
    });
  });
}

// Calls f(integral_constant<BITS>) for the widths the kernels have code for.
template <class F>
LOWBIT_X86_INLINE void with_lut_bits(int bits, F&& f) {
  switch (bits) {
    case 1: return f(std::integral_constant<int, 1>{});
    case 2: return f(std::integral_constant<int, 2>{});
    default: return f(std::integral_constant<int, 3>{});
  }
}

// The registered entry point of a LUT GEMV: the first NP·q of the call's panels as q steps of
// NP panels q apart (NP long streams, as gemv.h), the rest one by one.
template <class T, int NP>
inline void lut_gemv(const GemmShape& shape, const UKernelArgs& a) {
  const PackedGeometry& g = *shape.geo;
  const LutLhs lhs = lut_lhs_view<1>(shape, a);
  with_lut_bits(g.bits, [&](auto bits) LOWBIT_X86_LAMBDA {
    with_lut_group(g.group_size, [&](auto gs) LOWBIT_X86_LAMBDA {
      const int np = int((a.n + size_t(T::kCols) - 1) / size_t(T::kCols));
      const int q = np / NP;
      for (int p = 0; p < q; ++p) lut_gemv_panels<T, bits, NP, gs>(g, lhs, a, p, q);
      for (int p = q * NP; p < np; ++p) lut_gemv_panels<T, bits, 1, gs>(g, lhs, a, p, 1);
    });
  });
}

}  // namespace
}  // namespace x86
}  // namespace lowbit
