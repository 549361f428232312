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
// T' >> 5, one vpshufb table each (format/lhs_layout.h). Per index vector of kCols columns, one
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
#include "format/lhs_layout.h"  // the lut4 LHS block (lhs_block_layout, kLutBias)

namespace lowbit {
namespace x86 {
namespace {

// k values whose lookups the uint16 sums hold exactly (above): a multiple of 16.
template <int BITS>
constexpr int kWidenK = BITS == 1 ? 128 : BITS == 2 ? 32 : 16;

// The parts of one LUT LHS block of MR rows (format/lhs_layout.h).
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

// The lookups of 16 k (two k8 steps, 4 per plane) for ROWS rows and NP panels, added into the
// uint16 sums (lo, hi pairs of the low, resp. high 8 bytes of each 16-byte lane: ab[r][q][0],
// ab[r][q][1]). at[q]: panel q's index vectors of the first step (one per plane), extracted
// once for every row; tab: the tables of the step's first k4 group ([k/4][ROWS][32]).
template <class T, int BITS, int ROWS, int NP>
LOWBIT_X86_INLINE void lut_chunk(const uint8_t* const* at, const uint8_t* tab,
                                 typename T::V (&ab)[ROWS][NP][2], typename T::V nib) {
  using V = typename T::V;
  V lo[ROWS][NP][BITS], hi[ROWS][NP][BITS];
  static_for<2>([&](auto t) LOWBIT_X86_LAMBDA {
    V idx[NP][BITS][2];
    static_for<BITS>([&](auto p) LOWBIT_X86_LAMBDA {
      static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
        const V v = T::load_packed(at[q] + (t * BITS + p) * T::kCols);
        idx[q][p][0] = T::and_(v, nib);
        idx[q][p][1] = T::and_(T::template srli16<4>(v), nib);
      });
    });
    static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
      const uint8_t* t0 = tab + (2 * t * ROWS + r) * kLutTableBytes;  // k4 group 2t
      const uint8_t* t1 = t0 + ROWS * kLutTableBytes;                  // and 2t + 1
      const V tl0 = T::table(t0), th0 = T::table(t0 + 16), tl1 = T::table(t1), th1 = T::table(t1 + 16);
      static_for<BITS>([&](auto p) LOWBIT_X86_LAMBDA {
        static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
          const V l = T::add8(T::shuffle(tl0, idx[q][p][0]), T::shuffle(tl1, idx[q][p][1]));
          const V h = T::add8(T::shuffle(th0, idx[q][p][0]), T::shuffle(th1, idx[q][p][1]));
          lo[r][q][p] = t == 0 ? l : T::add8(lo[r][q][p], l);
          hi[r][q][p] = t == 0 ? h : T::add8(hi[r][q][p], h);
        });
      });
    });
  });
  static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
    static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
      static_for<BITS>([&](auto p) LOWBIT_X86_LAMBDA {
        // (lo, hi) · (2^p, 32·2^p); from p = 2 on, (1, 32) shifted (a byte cannot hold 128).
        constexpr int kW = 1 << (p < 2 ? int(p) : 0);
        const V w = T::set1_16(int16_t(kW | (32 * kW) << 8));
        static_for<2>([&](auto h) LOWBIT_X86_LAMBDA {
          V x = T::maddubs(h == 0 ? T::unpacklo8(lo[r][q][p], hi[r][q][p]) : T::unpackhi8(lo[r][q][p], hi[r][q][p]), w);
          if constexpr (p >= 2) x = T::template slli16<p>(x);
          ab[r][q][h] = T::add16(ab[r][q][h], x);
        });
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

// ROWS rows (an LHS block of ROWS), NP panels p0, p0 + ps, ...: a panel is 4 runs of T::kNr
// columns, d and the f32 sums one vector per row and run. BITS: 1..3 (kWidenK); GS: the group
// size, or 0 (with_lut_group). Every record is prefetched UKernelArgs::prefetch_bytes ahead when
// that is > 0 (the plan gives a distance to the kernels the registry says prefetch: the GEMV).
template <class T, int BITS, int ROWS, int NP, int GS>
inline void lut_panels(const PackedGeometry& g, const LutLhs& lhs, const UKernelArgs& a, int p0, int ps) {
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
  F facc[ROWS][NP][4];
  static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
    static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA { static_for<4>([&](auto u) LOWBIT_X86_LAMBDA { facc[r][q][u] = T::fzero(); }); });
  });
  for (int grp = 0; grp < g.groups; ++grp) {
    V d[ROWS][NP][4];
    static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
      int32_t ex = 0;
      for (int s = 0; s < blocks; ++s) ex -= pairs[s * ROWS + r] >> 16;
      const V start = T::set1_32(-bias - (g.has_zeros ? 0 : o * ex));
      static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
        static_for<4>([&](auto u) LOWBIT_X86_LAMBDA {
          // cz·Ex in int32 (vpmulld): exact modulo 2^32, as d is.
          d[r][q][u] = g.has_zeros ? T::sub32(start, T::mul32(T::cz_cols(rec[q] + g.zeros_offset + u * T::kNr, o), T::set1_32(ex)))
                                   : start;
        });
      });
    });
    pairs += blocks * ROWS;
    const uint8_t* at[NP];
    static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
      at[q] = rec[q];
      if (a.prefetch_bytes > 0)  // every line of the record, that far ahead
        for (size_t b = 0; b < g.record_bytes; b += 64)
          _mm_prefetch(reinterpret_cast<const char*>(rec[q] + b + a.prefetch_bytes), _MM_HINT_T0);
    });
    for (int c0 = 0; c0 < chunks; c0 += kChunks) {
      V ab[ROWS][NP][2];
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
        static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA { ab[r][q][0] = ab[r][q][1] = T::zero(); });
      });
      const int c1 = min_i(c0 + kChunks, chunks);
#pragma GCC unroll 8
      for (int c = c0; c < c1; ++c) {
        lut_chunk<T, BITS, ROWS, NP>(at, tab, ab, nib);
        tab += 4 * ROWS * kLutTableBytes;
        static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA { at[q] += 2 * BITS * T::kCols; });
      }
      // Run u of the panel: the even (u = 0, 2) or odd (1, 3) halves of the 32-bit lanes of
      // ab[r][q][u / 2] (format/layout.h, lut_byte).
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
        static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
          static_for<4>([&](auto u) LOWBIT_X86_LAMBDA {
            const V half = u % 2 == 0 ? T::and_(ab[r][q][u / 2], low16) : T::template srli32<16>(ab[r][q][u / 2]);
            d[r][q][u] = T::add32(d[r][q][u], half);
          });
        });
      });
    }
    const bool bf16 = g.scale_format == ScaleFormat::bf16;
    static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
      F sw[4];
      T::load_scales4(rec[q] + g.scales_offset, bf16, sw);
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
        static_for<4>([&](auto u) LOWBIT_X86_LAMBDA { facc[r][q][u] = T::fmadd(T::cvt(d[r][q][u]), sw[u], facc[r][q][u]); });
      });
      rec[q] += g.record_bytes;
    });
  }
  const Lhs out{lhs.sx, nullptr, nullptr, nullptr};  // store_row reads the rows' s_x
  static_for<NP>([&](auto q) LOWBIT_X86_LAMBDA {
    static_for<4>([&](auto u) LOWBIT_X86_LAMBDA {
      const int run = (p0 + q * ps) * 4 + u;  // kNr columns each
      if (size_t(run) * T::kNr < a.n)
        static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
          if (size_t(r) < a.m) store_row<T>(out, a, run, r, facc[r][q][u]);
        });
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
// NP panels q apart (NP long streams, as gemv.h), the rest one by one, each record prefetched
// UKernelArgs::prefetch_bytes ahead.
template <class T, int NP>
inline void lut_gemv(const GemmShape& shape, const UKernelArgs& a) {
  const PackedGeometry& g = *shape.geo;
  const LutLhs lhs = lut_lhs_view<1>(shape, a);
  with_lut_bits(g.bits, [&](auto bits) LOWBIT_X86_LAMBDA {
    with_lut_group(g.group_size, [&](auto gs) LOWBIT_X86_LAMBDA {
      const int np = int((a.n + size_t(T::kCols) - 1) / size_t(T::kCols));
      const int q = np / NP;
      for (int p = 0; p < q; ++p) lut_panels<T, bits, 1, NP, gs>(g, lhs, a, p, q);
      for (int p = q * NP; p < np; ++p) lut_panels<T, bits, 1, 1, gs>(g, lhs, a, p, 1);
    });
  });
}

// The registered entry point of a LUT GEMM: an LHS block of MR rows (all computed, the rows
// past a.m not stored), one panel at a time; the index vectors are extracted once for the MR
// rows.
template <class T, int MR>
inline void lut_gemm(const GemmShape& shape, const UKernelArgs& a) {
  const PackedGeometry& g = *shape.geo;
  const LutLhs lhs = lut_lhs_view<MR>(shape, a);
  with_lut_bits(g.bits, [&](auto bits) LOWBIT_X86_LAMBDA {
    with_lut_group(g.group_size, [&](auto gs) LOWBIT_X86_LAMBDA {
      const int np = int((a.n + size_t(T::kCols) - 1) / size_t(T::kCols));
      for (int p = 0; p < np; ++p) lut_panels<T, bits, MR, 1, gs>(g, lhs, a, p, 1);
    });
  });
}

}  // namespace
}  // namespace x86
}  // namespace lowbit
