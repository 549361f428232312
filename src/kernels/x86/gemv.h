// The x86 GEMV micro-kernel family (one row, NP panels of kNr columns at a time), written once
// over a vector-traits struct and instantiated in each ISA's translation unit. Decode streams
// the weights once, mostly from L3 or DRAM, so the GEMV reads nothing but the records: it
// skips the layout's column sums (a fifth more bytes at 4 bits) and sums the weights it has
// in registers anyway (one byte add per vector, common.h). The NP panels read together are a
// 1/NP of the call's panels apart: NP long streams, which one core reads from DRAM faster
// than NP adjacent short ones. It prefetches every stream UKernelArgs::prefetch_bytes ahead
// (at 0 the line being read: no lookahead): the registry's default distance or the tuning
// record's measured one
// (docs/x86-kernels.md, "Decode from DRAM": NP, the spread and the distance per ISA).
#pragma once

#include "kernels/x86/common.h"

namespace lowbit {
namespace x86 {
namespace {

// Without zero points, cz = o in every column: -o·Ex can be the pair product of each block
// (kPairProduct), or one scalar per group that the accumulators start from (kStart: fewer
// vector ops when many panels share it, AVX-512's 4; register copies with 2).
enum class OffsetTerm { kPairProduct, kStart };

// Panels p0, p0 + ps, ..., p0 + (NP - 1)·ps of the call.
template <class T, class S, int NP, int GS, int SF, bool ZEROS, OffsetTerm OT>
inline void gemv_panels(const PackedGeometry& g, const Lhs& lhs, const UKernelArgs& a, int p0, int ps) {
  using V = typename T::V;
  const int block = GS > 0 ? GS : g.sum_block;
  const int blocks = GS > 0 ? 1 : g.sums_per_group;
  const int o = 1 << (g.bits - 1);
  const V nzx = T::set1_16(int16_t(-lhs.zx[0]));
  // at[p]: where panel p's current record is read, its first plane for the formats read in
  // place (one pointer per panel in the loop, no record + offset per group); rec(p) the record.
  const size_t lead = S::kBuffered ? 0 : g.planes[0].offset;
  const uint8_t* at[NP];
  static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { at[p] = a.rhs + size_t(p0 + p * ps) * g.panel_bytes + lead; });
  auto rec = [&](int p) LOWBIT_X86_LAMBDA { return at[p] - lead; };
  const int8_t* qx = lhs.q;
  const int32_t* pairs = lhs.pairs;
  // The prefetch distance lives in a stack slot that block_dot (and the unpack-buffer formats'
  // per-group prefetch) reads when it prefetches: held in a register it made the 3- and 7-bit
  // GEMVs spill.
  const volatile uint32_t pf_slot = a.prefetch_bytes;
  alignas(64) uint8_t buf[S::kBuffered ? NP : 1][S::kBuffered ? T::kNr * kMaxSumBlock : 1];
  FSums<T, 1, NP, false> facc(nullptr);
  for (int grp = 0; grp < g.groups; ++grp) {
    constexpr bool kPairs = ZEROS || OT == OffsetTerm::kPairProduct;
    int32_t start = 0;  // -o·Ex of the group's blocks (the LHS pair holds -Ex in its high half)
    if (!kPairs)
      for (int s = 0; s < blocks; ++s) start += (pairs[s] >> 16) * o;
    const V init = T::set1_32(start);
    V acc[1][NP], cz[NP];
    static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
      acc[0][p] = kPairs ? T::zero() : init;
      if (kPairs) cz[p] = ZEROS ? T::cz_high(rec(p) + g.zeros_offset, o) : T::set1_32(o << 16);
      if (S::kBuffered) {  // the formats read in place prefetch inside block_dot
        const size_t pf = pf_slot;
        for (size_t b = 0; pf > 0 && b < g.record_bytes; b += 64)
          _mm_prefetch(reinterpret_cast<const char*>(rec(p) + b + pf), _MM_HINT_T0);
      }
    });
    for (int s = 0; s < blocks; ++s) {
      const uint8_t* src[NP][S::kCount];
      static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { block_planes<T, S>(g, rec(p), s, buf[S::kBuffered ? int(p) : 0], src[p]); });
      block_dot<T, S, 1, NP, 1, true, chunk_kblocks<S>(GS), S::kBuffered ? 0 : kRuntimePrefetch>(src, qx, block / kKr, acc, nzx,
                                                                                       &pf_slot);
      qx += block;
      if constexpr (kPairs && NP == 1) {
        acc[0][0] = T::pair_dot_x(acc[0][0], cz[0], pairs);
      } else if constexpr (kPairs) {
        const V x = T::bcast32(pairs);
        static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { acc[0][p] = T::pair_dot(acc[0][p], cz[p], x); });
      }
      ++pairs;
    }
    facc.next_group();
    static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA {
      facc.add(0, p, T::cvt(acc[0][p]), record_scales<T, SF>(g, rec(p)));
      at[p] += g.record_bytes;
    });
  }
  static_for<NP>([&](auto p) LOWBIT_X86_LAMBDA { store_row<T>(lhs, a, p0 + p * ps, 0, facc.get(0, p)); });
}

// The registered entry point of a GEMV (an LHS block of one row): the first NP·q of the call's
// panels as q steps of NP panels q apart, the rest one by one.
template <class T, int NP, OffsetTerm OT>
inline void gemv(const GemmShape& shape, const UKernelArgs& a) {
  const PackedGeometry& g = *shape.geo;
  const Lhs lhs = lhs_view<1>(shape, a);
  with_src(g, [&](auto s) LOWBIT_X86_LAMBDA {
    using S = decltype(s);
    with_group<S>(g, [&](auto gs, auto sf) LOWBIT_X86_LAMBDA {
      // Fewer panels at a time where their registers would not fit (T::gemv_panels).
      constexpr int kNp = min_i(NP, T::gemv_panels(S::kLoads));
      auto run = [&](auto zeros) LOWBIT_X86_LAMBDA {
        const int np = num_panels<T>(a);
        const int q = np / kNp;
        for (int p = 0; p < q; ++p) gemv_panels<T, S, kNp, gs, sf, zeros, OT>(g, lhs, a, p, q);
        for (int p = q * kNp; p < np; ++p) gemv_panels<T, S, 1, gs, sf, zeros, OT>(g, lhs, a, p, 1);
      };
      if (g.has_zeros) run(std::true_type{});
      else run(std::false_type{});
    });
  });
}

}  // namespace
}  // namespace x86
}  // namespace lowbit
