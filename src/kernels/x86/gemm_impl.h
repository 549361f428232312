// The x86 micro-kernel, written once over a vector-traits struct (avx2/traits.h,
// avxvnni/traits.h, avx512vnni/traits.h) and instantiated in each ISA's own translation unit.
//
// Exact arithmetic (DESIGN §1). With u = qw + o (o = 2^(bits-1)) the unsigned stream value and
// c = o + zw, per row and column of a group:
//   d = Σ(qx - zx)(u - c) = Σ u·qx - zx·Su - c·(Sx - gs·zx)
// Σ u·qx is an unsigned-by-signed byte dot (vpdpbusd / vpmaddubsw), Su = Σ u per column is
// computed here once per LHS block, Sx = Σ qx comes with the packed LHS. Everything is exact
// modulo 2^32 and d itself fits in int32, so d is exact.
//
// Everything here has internal linkage: each ISA TU gets its own copy, so the linker can never
// hand an AVX-512 body to an AVX2 caller. Nothing from the standard library is instantiated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <emmintrin.h>

#include "registry/kernel.h"

namespace lowbit {
namespace x86 {
namespace {

constexpr int kKr = 4;  // k values per 32-bit lane, every x86 layout

constexpr int min_i(int a, int b) { return a < b ? a : b; }
constexpr int gcd_i(int a, int b) { return b == 0 ? a : gcd_i(b, a % b); }

// How the stream values of a k-block reach a register.
//   UNIT: bits per value in the vectors read (2, 4: one vector holds 8/UNIT k-blocks as bit
//         fields; 8: one k-block per vector, from the record or from the unpack buffer).
//   UMAX: largest value (bounds the exact int16 / uint8 partial sums).
template <int UNIT, int UMAX>
struct Src {
  static constexpr int kUnit = UNIT;
  static constexpr int kUmax = UMAX;
  static constexpr int kPerLoad = 8 / UNIT;
};

// Running sums of one column panel over one group.
template <class T, int ROWS>
struct PanelAcc {
  typename T::V dot[ROWS];  // Σ u·qx per row
  typename T::V su;         // Σ u
};

// Σ u·qx (and Σ u when SUM) over `nkb` k-blocks. src[p] points at the first vector of panel
// p; qx at the LHS of the first k-block and row (interleave MR x kKr). FOLD (one row): the
// column sums go straight into dot as -zx·Σu (nzx: -zx in every int16 lane), su is unused.
template <class T, class S, int NP, int ROWS, int MR, bool SUM = true, bool FOLD = false>
inline void dot_span(const uint8_t* const* src, const int8_t* qx, int nkb, PanelAcc<T, ROWS>* acc,
                     typename T::V nzx = typename T::V()) {
  static_assert(!FOLD || ROWS == 1, "folding is for one row");
  using V = typename T::V;
  // Partial sums stay exact for `run` k-blocks (T::run_kbs: int16 partials on AVX2), and the
  // uint8 running column sums for 255 / UMAX k-blocks.
  constexpr int kRaw = min_i(T::run_kbs(S::kUmax), 255 / S::kUmax);
  constexpr int kRun = kRaw / S::kPerLoad * S::kPerLoad;
  static_assert(kRun >= S::kPerLoad, "run too short");
  const V mask = T::set1_8(char(S::kUnit == 8 ? 0xFF : (1 << S::kUnit) - 1));
  for (int kb0 = 0; kb0 < nkb; kb0 += kRun) {
    const int n = min_i(kRun, nkb - kb0);
    typename T::Part part[NP][ROWS];
    V s8[NP];
    for (int p = 0; p < NP; ++p) {
      s8[p] = T::zero();
      for (int r = 0; r < ROWS; ++r) part[p][r] = T::part_begin(acc[p].dot[r]);
    }
#pragma GCC unroll 8
    for (int kb = kb0; kb < kb0 + n; kb += S::kPerLoad) {
      V raw[NP];
      for (int p = 0; p < NP; ++p) raw[p] = T::load(src[p] + size_t(kb / S::kPerLoad) * T::kBytes);
      for (int s = 0; s < S::kPerLoad; ++s) {
        typename T::W w[NP];
        for (int p = 0; p < NP; ++p) {
          V u = raw[p];
          if (S::kUnit != 8) u = T::and_(T::srli16(u, s * S::kUnit), mask);
          if (SUM) s8[p] = T::add8(s8[p], u);
          w[p] = T::template prep<S::kUmax>(u);
        }
        const int8_t* x = qx + size_t(kb + s) * MR * kKr;
        for (int r = 0; r < ROWS; ++r) {
          const V xr = T::bcast32(x + r * kKr);
          for (int p = 0; p < NP; ++p) part[p][r] = T::template dot<S::kUmax>(part[p][r], w[p], xr);
        }
      }
    }
    for (int p = 0; p < NP; ++p) {
      for (int r = 0; r < ROWS; ++r) acc[p].dot[r] = T::template part_end<S::kUmax>(acc[p].dot[r], part[p][r]);
      if (SUM && FOLD) acc[p].dot[0] = T::sum_flush_scaled(acc[p].dot[0], s8[p], nzx);
      else if (SUM) acc[p].su = T::sum_flush(acc[p].su, s8[p]);
    }
  }
}

// Generic bit widths: unpacks `bytes` stream values starting at stream byte `start` of one
// record into `out` (u, one per byte), 16 bytes at a time with SSE2 shifts. `bytes` covers
// whole chunks of every plane.
inline void unpack_segment(const PackedGeometry& g, const uint8_t* rec, size_t start, size_t bytes,
                           uint8_t* out) {
  for (int i = 0; i < g.num_planes; ++i) {
    const Plane& pl = g.planes[i];
    const int w = pl.width, per_byte = 8 / w, chunk = pl.chunk;
    const uint8_t* in = rec + pl.offset + start * size_t(w) / 8;
    const size_t in_bytes = bytes * size_t(w) / 8;
    const __m128i mask = _mm_set1_epi8(char((1 << w) - 1));
    const __m128i up = _mm_cvtsi32_si128(pl.shift);
    for (size_t c = 0; c < in_bytes; c += size_t(chunk)) {
      uint8_t* dst = out + c * size_t(per_byte);
      for (int j = 0; j < chunk; j += 16) {
        const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + c + size_t(j)));
        for (int s = 0; s < per_byte; ++s) {
          // 16-bit shifts: the masked bits never cross a byte (s*w + w <= 8, shift + w <= 8).
          __m128i val = _mm_and_si128(_mm_srl_epi16(v, _mm_cvtsi32_si128(s * w)), mask);
          val = _mm_sll_epi16(val, up);
          __m128i* d = reinterpret_cast<__m128i*>(dst + size_t(s) * chunk + size_t(j));
          _mm_store_si128(d, i == 0 ? val : _mm_or_si128(_mm_load_si128(d), val));
        }
      }
    }
  }
}

// Stream bytes unpacked at a time by the generic path: a whole number of chunks of every
// plane (divides the record's stream and 8 vectors).
inline size_t generic_segment(const PackedGeometry& g) {
  size_t s = 1;
  for (int i = 0; i < g.num_planes; ++i) {
    const size_t cv = size_t(g.planes[i].chunk) * size_t(8 / g.planes[i].width);
    s = s / size_t(gcd_i(int(s), int(cv))) * cv;
  }
  return s;
}

struct Call {
  const PackedGeometry* g;
  const uint8_t* rhs;
  const float* sx;
  const int32_t* zx;
  const int32_t* sums;
  const int8_t* qx;
  int o;  // 2^(bits-1)
};

// Per (panel, group): the weight scales and c = o + zw (zero when the weights have no zeros).
template <class T>
struct GroupConsts {
  typename T::F sw;
  typename T::V cz;
};
template <class T>
inline GroupConsts<T> group_consts(const PackedGeometry& g, const uint8_t* rec) {
  GroupConsts<T> k;
  k.sw = T::load_scales(rec + g.scales_offset, g.scale_format == ScaleFormat::bf16);
  k.cz = g.has_zeros ? T::add32(T::load_zeros(rec + g.zeros_offset), T::set1_32(1 << (g.bits - 1)))
                     : T::zero();
  return k;
}

// Per (group, row): Ex = Sx - gs·zx, and o·Ex (the whole c·Ex term when there are no zeros).
struct RowGroup {
  int32_t ex, oex;
};
inline RowGroup row_group(const Call& c, int grp, int r, int mr) {
  const int32_t ex = c.sums[size_t(grp) * size_t(mr) + size_t(r)] - c.g->group_size * c.zx[r];
  return RowGroup{ex, c.o * ex};
}

// One row's group step: d = Σu·qx - zx·Su - c·Ex, acc = fma((float)d, s_w, acc). `dot` already
// holds -zx·Su (and -o·Ex without zeros) when the caller folded them in.
template <class T, bool HAS_ZEROS, bool FOLDED>
inline typename T::F group_step(const GroupConsts<T>& k, RowGroup rg, typename T::V zx,
                                typename T::V dot, typename T::V su, typename T::F acc) {
  typename T::V d = dot;
  if (!FOLDED) d = T::sub32(d, T::mullo32(zx, su));
  if (HAS_ZEROS) d = T::sub32(d, T::mullo32(k.cz, T::set1_32(rg.ex)));
  else if (!FOLDED) d = T::sub32(d, T::set1_32(rg.oex));
  return T::fmadd(T::cvt(d), k.sw, acc);
}

// y = fma(acc, s_x, bias), then max(lo, y), min(hi, y): NaN in y survives (second operand).
template <class T>
inline void store_row(const Call& c, const UKernelArgs& a, int p, int r, typename T::F acc) {
  const size_t col = size_t(p) * T::kNr;
  const int cols = int(a.n - col < size_t(T::kNr) ? a.n - col : size_t(T::kNr));
  const typename T::F bias = a.bias ? T::load_cols(a.bias + col, cols) : T::fzero();
  typename T::F y = T::fmadd(acc, T::fset1(c.sx[r]), bias);
  y = T::fmin(T::fset1(a.clamp_max), T::fmax(T::fset1(a.clamp_min), y));
  T::store_cols(a.y + size_t(r) * a.y_stride + col, y, cols);
}

// NP column panels starting at panel `p0`, ROWS rows of an MR-row LHS block. One row (GEMV)
// folds -zx·Σu and -o·Ex into the integer sums, leaving one convert and one fma per group.
template <class T, class S, int NP, int ROWS, int MR, bool HAS_ZEROS>
inline void panels(const Call& c, const UKernelArgs& a, int p0) {
  using V = typename T::V;
  using F = typename T::F;
  constexpr bool kFold = ROWS == 1;
  const PackedGeometry& g = *c.g;
  const int gs = g.group_size;
  const int kbs = gs / kKr;
  F facc[NP][ROWS];
  for (int p = 0; p < NP; ++p)
    for (int r = 0; r < ROWS; ++r) facc[p][r] = T::fzero();
  V vzx[ROWS];
  for (int r = 0; r < ROWS; ++r) vzx[r] = T::set1_32(c.zx[r]);
  const V nzx16 = T::set1_16(int16_t(-c.zx[0]));
  const size_t seg = S::kUnit == 8 && S::kUmax != 255 ? generic_segment(g) : 0;
  for (int grp = 0; grp < g.groups; ++grp) {
    const uint8_t* rec[NP];
    for (int p = 0; p < NP; ++p)
      rec[p] = c.rhs + size_t(p0 + p) * g.panel_bytes + size_t(grp) * g.record_bytes;
    RowGroup rg[ROWS];
    for (int r = 0; r < ROWS; ++r) rg[r] = row_group(c, grp, r, MR);
    PanelAcc<T, ROWS> acc[NP];
    for (int p = 0; p < NP; ++p) {
      acc[p].su = T::zero();
      for (int r = 0; r < ROWS; ++r)
        acc[p].dot[r] = kFold && !HAS_ZEROS ? T::set1_32(-rg[r].oex) : T::zero();
    }
    const int8_t* qx = c.qx + size_t(grp) * size_t(gs) * MR;
    if (S::kUnit == 8 && S::kUmax != 255) {
      alignas(64) uint8_t buf[NP][8 * T::kBytes];
      const uint8_t* src[NP];
      for (int p = 0; p < NP; ++p) src[p] = buf[p];
      for (size_t s0 = 0; s0 < g.stream_bytes; s0 += seg) {
        for (int p = 0; p < NP; ++p) unpack_segment(g, rec[p], s0, seg, buf[p]);
        dot_span<T, S, NP, ROWS, MR, true, kFold>(src, qx + s0 / size_t(T::kNr) * MR,
                                                  int(seg / T::kBytes), acc, nzx16);
      }
    } else {
      const uint8_t* src[NP];
      for (int p = 0; p < NP; ++p) src[p] = rec[p] + g.planes[0].offset;
      dot_span<T, S, NP, ROWS, MR, true, kFold>(src, qx, kbs, acc, nzx16);
    }
    for (int p = 0; p < NP; ++p) {
      const GroupConsts<T> k = group_consts<T>(g, rec[p]);
      for (int r = 0; r < ROWS; ++r)
        facc[p][r] = group_step<T, HAS_ZEROS, kFold>(k, rg[r], vzx[r], acc[p].dot[r], acc[p].su, facc[p][r]);
    }
  }
  for (int p = 0; p < NP; ++p)
    for (int r = 0; r < ROWS && size_t(r) < a.m; ++r) store_row<T>(c, a, p0 + p, r, facc[p][r]);
}

template <class T, class S, int NP, int ROWS, int MR, bool HAS_ZEROS>
inline void all_panels_z(const Call& c, const UKernelArgs& a) {
  const int np = int((a.n + size_t(T::kNr) - 1) / size_t(T::kNr));
  int p = 0;
  for (; p + NP <= np; p += NP) panels<T, S, NP, ROWS, MR, HAS_ZEROS>(c, a, p);
  for (; p < np; ++p) panels<T, S, 1, ROWS, MR, HAS_ZEROS>(c, a, p);
}

template <class T, class S, int NP, int ROWS, int MR>
inline void all_panels(const Call& c, const UKernelArgs& a) {
  if (c.g->has_zeros) all_panels_z<T, S, NP, ROWS, MR, true>(c, a);
  else all_panels_z<T, S, NP, ROWS, MR, false>(c, a);
}


// Prefill (MR rows, a multiple of SUB): each (panel, group) is unpacked once into an L1 buffer
// (u, one byte per value), then every SUB-row slice of the block runs over it, so unpacking and
// weight reads are paid once per MR rows.
constexpr size_t kWideSegBytes = 4096;

template <class T, class S, int NP, int MR, int SUB>
inline void wide_panel(const Call& c, const UKernelArgs& a, int p0, int rows) {
  using V = typename T::V;
  using F = typename T::F;
  const PackedGeometry& g = *c.g;
  const int gs = g.group_size;
  constexpr bool kDirect = S::kUnit == 8 && S::kUmax == 255;  // 8-bit: the record is the buffer
  constexpr bool kGeneric = S::kUnit == 8 && S::kUmax != 255;
  // Segments: whole chunks of every plane, at most kWideSegBytes of stream.
  const size_t base = kGeneric ? generic_segment(g) : size_t(S::kPerLoad) * T::kBytes;
  const size_t seg = kWideSegBytes / base * base;
  alignas(64) uint8_t buf[NP][kWideSegBytes];
  F facc[NP][MR];
  V acc[NP][MR];
  for (int p = 0; p < NP; ++p)
    for (int r = 0; r < MR; ++r) facc[p][r] = T::fzero();
  const int slices = (rows + SUB - 1) / SUB;
  for (int grp = 0; grp < g.groups; ++grp) {
    const uint8_t* rec[NP];
    V su[NP];
    for (int p = 0; p < NP; ++p) {
      rec[p] = c.rhs + size_t(p0 + p) * g.panel_bytes + size_t(grp) * g.record_bytes;
      su[p] = T::zero();
      for (int r = 0; r < MR; ++r) acc[p][r] = T::zero();
    }
    const int8_t* qx = c.qx + size_t(grp) * size_t(gs) * MR;
    for (size_t s0 = 0; s0 < g.stream_bytes; s0 += seg) {
      const size_t bytes = g.stream_bytes - s0 < seg ? g.stream_bytes - s0 : seg;
      const uint8_t* src[NP];
      for (int p = 0; p < NP; ++p) {
        src[p] = buf[p];
        if (kDirect) {
          src[p] = rec[p] + g.planes[0].offset + s0;
        } else if (kGeneric) {
          unpack_segment(g, rec[p], s0, bytes, buf[p]);
        } else {
          const uint8_t* in = rec[p] + g.planes[0].offset + s0 * S::kUnit / 8;
          const V mask = T::set1_8(char((1 << S::kUnit) - 1));
          for (size_t i = 0; i < bytes / T::kBytes; i += S::kPerLoad) {
            const V v = T::load(in + i / S::kPerLoad * T::kBytes);
            for (int s = 0; s < S::kPerLoad; ++s)
              T::store(buf[p] + (i + size_t(s)) * T::kBytes, T::and_(T::srli16(v, s * S::kUnit), mask));
          }
        }
      }
      using Flat = Src<8, S::kUmax>;
      const int nkb = int(bytes / T::kBytes);
      const int8_t* x = qx + s0 / size_t(T::kNr) * MR;
      for (int sl = 0; sl < slices; ++sl) {
        PanelAcc<T, SUB> pa[NP];
        for (int p = 0; p < NP; ++p) {
          pa[p].su = su[p];
          for (int r = 0; r < SUB; ++r) pa[p].dot[r] = acc[p][sl * SUB + r];
        }
        // The first slice also sums the columns.
        if (sl == 0) dot_span<T, Flat, NP, SUB, MR, true>(src, x, nkb, pa);
        else dot_span<T, Flat, NP, SUB, MR, false>(src, x + sl * SUB * kKr, nkb, pa);
        for (int p = 0; p < NP; ++p) {
          su[p] = pa[p].su;
          for (int r = 0; r < SUB; ++r) acc[p][sl * SUB + r] = pa[p].dot[r];
        }
      }
    }
    for (int p = 0; p < NP; ++p) {
      const GroupConsts<T> k = group_consts<T>(g, rec[p]);
      for (int r = 0; r < slices * SUB; ++r) {
        const RowGroup rg = row_group(c, grp, r, MR);
        facc[p][r] = g.has_zeros
            ? group_step<T, true, false>(k, rg, T::set1_32(c.zx[r]), acc[p][r], su[p], facc[p][r])
            : group_step<T, false, false>(k, rg, T::set1_32(c.zx[r]), acc[p][r], su[p], facc[p][r]);
      }
    }
  }
  for (int p = 0; p < NP; ++p)
    for (int r = 0; r < rows; ++r) store_row<T>(c, a, p0 + p, r, facc[p][r]);
}

template <class T, class S, int NP, int MR, int SUB>
inline void wide_all(const Call& c, const UKernelArgs& a) {
  const int np = int((a.n + size_t(T::kNr) - 1) / size_t(T::kNr));
  int p = 0;
  for (; p + NP <= np; p += NP) wide_panel<T, S, NP, MR, SUB>(c, a, p, int(a.m));
  for (; p < np; ++p) wide_panel<T, S, 1, MR, SUB>(c, a, p, int(a.m));
}

// Calls f(Src<...>{}) with the stream format of `bits`: 2 and 4 bits unpack in registers, 8
// bits are read as they are, the others come through the unpack buffer (UMAX bounds the sums).
template <class F>
inline void with_src(int bits, F&& f) {
  switch (bits) {
    case 2: return f(Src<2, 3>{});
    case 4: return f(Src<4, 15>{});
    case 8: return f(Src<8, 255>{});
    case 1:
    case 3: return f(Src<8, 7>{});
    default: return f(Src<8, 127>{});
  }
}

template <class T, int NP, int ROWS, int MR>
inline void by_bits(const Call& c, const UKernelArgs& a) {
  with_src(c.g->bits, [&](auto s) { all_panels<T, decltype(s), NP, ROWS, MR>(c, a); });
}

template <int MR>
inline Call make_call(const GemmShape& shape, const UKernelArgs& a) {
  const PackedGeometry& g = *shape.geo;
  const LhsBlockLayout l = lhs_block_layout(LhsFormat{MR, kKr}, size_t(shape.k), size_t(g.groups));
  Call c;
  c.g = &g;
  c.rhs = a.rhs;
  c.sx = reinterpret_cast<const float*>(a.lhs);
  c.zx = reinterpret_cast<const int32_t*>(a.lhs + l.zero_offset);
  c.sums = reinterpret_cast<const int32_t*>(a.lhs + l.sums_offset);
  c.qx = reinterpret_cast<const int8_t*>(a.lhs + l.q_offset);
  c.o = 1 << (g.bits - 1);
  return c;
}

// Entry point of a prefill kernel (see wide_panel); slices past a.m are skipped.
template <class T, int MR, int SUB, int NP>
inline void gemm_wide(const GemmShape& shape, const UKernelArgs& a) {
  const Call c = make_call<MR>(shape, a);
  with_src(c.g->bits, [&](auto s) { wide_all<T, decltype(s), NP, MR, SUB>(c, a); });
}

// The registered entry point of an MR-row kernel: rows of a partial block are not computed.
template <class T, int MR, int NP>
inline void gemm(const GemmShape& shape, const UKernelArgs& a) {
  const Call c = make_call<MR>(shape, a);
  if constexpr (MR == 1) {
    by_bits<T, NP, 1, 1>(c, a);
  } else {
    static_assert(MR == 4 || MR == 8, "row variants");
    // Rows past a.m are zero in the LHS; they are computed (when rounding up) but not stored.
    switch (a.m) {
      // Few rows: more panels at once keep more weight streams in flight.
      case 1: return by_bits<T, 4, 1, MR>(c, a);
      case 2: return by_bits<T, 2 * NP, 2, MR>(c, a);
      case 3:  // a 3-row instantiation allocates registers worse than the 4-row one
      case 4: return by_bits<T, NP, 4, MR>(c, a);
      default: return by_bits<T, NP, MR, MR>(c, a);
    }
  }
}

}  // namespace
}  // namespace x86
}  // namespace lowbit
