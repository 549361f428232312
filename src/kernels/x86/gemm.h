// The x86 GEMM micro-kernel family (MR rows of an LHS block x NP panels of kNr columns),
// written once over a vector-traits struct and instantiated in each ISA's translation unit.
// It reads the column-sum layouts (format/layout.h): per sum block of a group, the dot
// products go into zeroed int32 accumulators, then one pair product adds the whole zero-point
// correction (common.h); per group, one convert and one fma per accumulator. Accumulators,
// unpacked weights and f32 sums stay in registers (ROWS x NP of each, chosen per ISA), and at
// the common 4-bit group sizes the group step is one straight block of code.
#pragma once

#include "kernels/x86/common.h"

namespace lowbit {
namespace x86 {
namespace {

template <class T, class S, int ROWS, int NP, int MR, int GS, int SF, int PF, bool FMEM, int CHAINS>
inline void gemm_panels(const PackedGeometry& g, const Lhs& lhs, const UKernelArgs& a, int p0) {
  using V = typename T::V;
  using F = typename T::F;
  const int block = GS > 0 ? GS : g.sum_block;
  const int blocks = GS > 0 ? 1 : g.sums_per_group;
  const size_t sums_step = size_t(blocks) * T::kNr * 4;  // column sums per group
  // The column sums are a second stream per panel: prefetched about as far ahead.
  const size_t sums_ahead = (PF / g.record_bytes + 1) * sums_step;
  const uint8_t* rec[NP];
  const uint8_t* sums[NP];
  static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
    rec[p] = a.rhs + size_t(p0 + p) * g.panel_bytes;
    sums[p] = a.sums + size_t(p0 + p) * g.sums_stride;
  });
  const int8_t* qx = lhs.q;
  const int32_t* pairs = lhs.pairs;
  alignas(64) uint8_t buf[S::kBuffered ? NP : 1][S::kBuffered ? T::kNr * kMaxSumBlock : 1];
  alignas(64) float fbuf[FMEM ? ROWS * NP * T::kNr : 1];
  FSums<T, ROWS, NP, FMEM> facc(fbuf);
  for (int grp = 0; grp < g.groups; ++grp) {
    V acc[ROWS][NP];
    static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
      _mm_prefetch(reinterpret_cast<const char*>(sums[p] + sums_ahead), _MM_HINT_T0);
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA { acc[r][p] = T::zero(); });
    });
    for (int s = 0; s < blocks; ++s) {
      const uint8_t* src[NP][S::kCount];
      static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { block_planes<T, S>(g, rec[p], s, buf[S::kBuffered ? int(p) : 0], src[p]); });
      block_dot<T, S, ROWS, NP, MR, false, chunk_kblocks<S>(GS), S::kBuffered ? 0 : PF, CHAINS>(src, qx, block / kKr, acc, V());
      qx += size_t(block) * MR;
      V cs[NP];
      static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { cs[p] = T::load(sums[p] + size_t(s) * T::kNr * 4); });
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
        if constexpr (NP == 1) {
          acc[r][0] = T::pair_dot_x(acc[r][0], cs[0], pairs + r);
        } else {
          const V x = T::bcast32(pairs + r);
          static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { acc[r][p] = T::pair_dot(acc[r][p], cs[p], x); });
        }
      });
      pairs += MR;
    }
    facc.next_group();
    static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
      const F sw = record_scales<T, SF>(g, rec[p]);
      static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA { facc.add(r, p, T::cvt(acc[r][p]), sw); });
      rec[p] += g.record_bytes;
      sums[p] += sums_step;
    });
  }
  static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
    static_for<ROWS>([&](auto r) LOWBIT_X86_LAMBDA {
      if (size_t(r) < a.m) store_row<T>(lhs, a, p0 + p, r, facc.get(r, p));
    });
  });
}

// Calls f(integral_constant<ROWS>) with the row count a block of m rows runs: m itself for
// the 4-bit fast paths (every count 1..MR has its own code, so the time per row falls with
// m), else the next of 2, 4, MR (the rows past m are zero in the LHS and not stored).
template <class S, int MR, class F>
LOWBIT_X86_INLINE void with_rows(int m, F&& f) {
  if constexpr (MR == 1) {
    f(std::integral_constant<int, 1>{});
  } else if constexpr (std::is_same<S, Planes<4>>::value) {
    static_for<MR>([&](auto i) LOWBIT_X86_LAMBDA {
      if (m == i + 1) f(std::integral_constant<int, i + 1>{});
    });
  } else if (m <= 2) {
    f(std::integral_constant<int, 2>{});
  } else if (m <= 4 || MR == 4) {
    f(std::integral_constant<int, min_i(4, MR)>{});
  } else {
    f(std::integral_constant<int, MR>{});
  }
}

// The registered entry point of an MR-row kernel over NP panels at a time (f32 sums in memory
// with FMEM; CHAINS dot chains per accumulator, block_dot).
template <class T, int MR, int NP, int PF, bool FMEM = false, int CHAINS = 1>
inline void gemm(const GemmShape& shape, const UKernelArgs& a) {
  static_assert(MR == 1 || MR == 4 || MR == 8, "row variants");
  const PackedGeometry& g = *shape.geo;
  const Lhs lhs = lhs_view<MR>(shape, a);
  with_src(g, [&](auto s) LOWBIT_X86_LAMBDA {
    using S = decltype(s);
    with_rows<S, MR>(int(a.m), [&](auto rows) LOWBIT_X86_LAMBDA {
      with_group<S>(g, [&](auto gs, auto sf) LOWBIT_X86_LAMBDA {
        for_panels<min_i(NP, T::gemm_panels(rows, S::kUmax)), T>(a, [&](int p, auto np) LOWBIT_X86_LAMBDA {
          gemm_panels<T, S, rows, np, MR, gs, sf, PF, FMEM, CHAINS>(g, lhs, a, p);
        });
      });
    });
  });
}

}  // namespace
}  // namespace x86
}  // namespace lowbit
