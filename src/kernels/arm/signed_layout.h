// The dot-product and i8mm kernels' common part: layouts arm_dotprod_n8k4s16_sums and
// arm_i8mm_n8k8s16_sums (format/layout.h: two's-complement fields, the top bits of q in the
// widest plane, ColSumForm::scaled column sums).
//
// Operands. Every kernel multiplies t = 2^(8-b)·q, the b-bit weight at the top of a byte with
// zeros below (KleidiAI's signed-nibble idea, for every width): a plane's field at the top of
// its byte is already that (one `and`), a field at the bottom is one `shl`, and a narrower
// plane's field is placed under the wider one's with one shift-and-insert (`sli`) or bitwise
// select (`bsl`). An accumulator then holds 2^(8-b)·Σ qx·q, and `scvtf #(8-b)` divides the
// scale out while converting (exactly: one rounding of the exact quotient).
//
// Zero points. Per sum block (format/layout.h, col_sum_block; the LHS pairs of
// ops/lhs_pack.h), with S = 2^(8-b)·Σq and Z = 2^(8-b)·zw from the packed sums:
//   2^(8-b)·d_block = 2^(8-b)·Σ qx·q + S·(-zx) + Z·(-Ex)
// so an accumulator starts at S·(-zx) (one smull; plus one smlal with zero points) instead of
// 0 and ends at 2^(8-b)·d_block, with no column sums in the loop and nothing to fold later.
// The bound |2^(8-b)·d_block| <= 2^7·128·255·(2^(b-1)+128) < 2^31 keeps every block exact;
// a group of several blocks adds its blocks' d (ssra) before the one conversion.
#pragma once

#include "kernels/arm/common.h"

namespace lowbit {
namespace arm {
namespace {

// Plane i of b bits (high planes first) holds value bits [plane_low(b, i), + width).
constexpr int plane_low(int bits, int i) {
  int s = bits;
  for (int j = 0; j <= i; ++j) s -= plane_width(bits, j);
  return s;
}

// The bits of the fields s' ≡ r (mod d) of a plane of width w.
constexpr uint8_t field_class_mask(int w, int r, int d) {
  unsigned m = 0;
  for (int s = r; s < 8 / w; s += d) m |= ((1u << w) - 1) << (s * w);
  return uint8_t(m);
}

// Field S of a chunk of a width-W plane moved to bits [Pos, Pos + W) with zeros below and
// anything above. Fields D = Pos/W + 1 apart share one mask: shifting one into place moves
// the others of its class above it or out of the byte, so the mask is computed once per class.
template <int W, int S, int Pos>
inline __attribute__((always_inline)) uint8x16_t place_low(uint8x16_t c) {
  constexpr int d = Pos / W + 1, shift = Pos - S * W;
  uint8x16_t m = c;
  if constexpr (S != 0) m = vandq_u8(c, vdupq_n_u8(field_class_mask(W, S % d, d)));
  if constexpr (shift > 0) return vshlq_n_u8(m, shift);
  else if constexpr (shift < 0) return vshrq_n_u8(m, -shift);
  else return m;
}

// The records of one panel for b-bit weights: operands of 16 k at a time ("steps": 8 stream
// vectors of 16 values; stream vector v of a record is values [16v, 16v + 16)).
template <int Bits>
struct SignedWeights {
  static constexpr int kPlanes = plane_count(Bits);
  const uint8_t* plane[kPlanes];

  // Planes of the record at `rec`: plane i starts gs·(widths before it) bytes in (nr = 8),
  // a constant when the group size is one (kGroup > 0).
  template <int kGroup>
  SignedWeights(const PackedGeometry& g, const uint8_t* rec, std::integral_constant<int, kGroup>) {
    static_for<kPlanes>([&](auto I) {
      constexpr int before = Bits - plane_low(Bits, I) - plane_width(Bits, I);
      plane[I] = rec + (kGroup > 0 ? size_t(kGroup) * before : g.planes[I].offset);
    });
  }

  // Chunk c of plane I in step t: a width-w plane has w chunks per step.
  template <int I>
  inline __attribute__((always_inline)) uint8x16_t chunk(int t, int c) const {
    constexpr int w = plane_width(Bits, I);
    return vld1q_u8(plane[I] + (size_t(t) * w + size_t(c)) * 16);
  }

  // The operand 2^(8-Bits)·q of stream vector V (0..7) of step t. Built from the lowest plane
  // up: its field placed with zeros below, then each wider plane's field inserted above it.
  template <int V>
  inline __attribute__((always_inline)) int8x16_t op(int t) const {
    constexpr int lo = kPlanes - 1, wl = plane_width(Bits, lo), fl = 8 / wl;
    uint8x16_t x = place_low<wl, V % fl, 8 - Bits>(chunk<lo>(t, V / fl));
    static_for<kPlanes - 1>([&](auto J) {
      constexpr int i = kPlanes - 2 - J, w = plane_width(Bits, i), f = 8 / w, s = V % f;
      constexpr int pos = 8 - Bits + plane_low(Bits, i);
      const uint8x16_t c = chunk<i>(t, V / f);
      if constexpr (i == 0 && s == f - 1) {
        x = vbslq_u8(vdupq_n_u8(uint8_t(0xFF << pos)), c, x);  // already at the top
      } else if constexpr (s == 0) {
        x = vsliq_n_u8(x, c, pos);
      } else {
        x = vsliq_n_u8(x, vshrq_n_u8(c, s * w), pos);
      }
    });
    return vreinterpretq_s8_u8(x);
  }
};

// acc = fma((float) d, s_w, acc) for an accumulator holding 2^Shift·d (Shift = 8 - b).
template <int Shift>
inline float32x4_t scale_scaled(float32x4_t acc, int32x4_t d, float32x4_t sw) {
  if constexpr (Shift == 0) return vfmaq_f32(acc, vcvtq_f32_s32(d), sw);
  else return vfmaq_f32(acc, vcvtq_n_f32_s32(d, Shift), sw);
}

// d of a group of several blocks: the first block's 2^Shift·d_block shifted down, the next
// ones added (exact: each is a multiple of 2^Shift).
template <int Shift>
inline int32x4_t add_block(int32x4_t dacc, int32x4_t acc, bool first) {
  if constexpr (Shift == 0) return first ? acc : vaddq_s32(dacc, acc);
  else return first ? vshrq_n_s32(acc, Shift) : vsraq_n_s32(dacc, acc, Shift);
}

// Column sums of one block (ColSumForm::scaled): S of the 8 columns, then Z, int16.
inline int16x8_t block_s(const int16_t* entry) { return vld1q_s16(entry); }
inline int16x8_t block_z(const int16_t* entry) { return vld1q_s16(entry + kNr); }

// Per-group scales of four panel columns, f32 or bf16 (bf16 << 16 is exact).
template <bool Bf16>
inline float32x4_t load_scales4(const uint8_t* scales, int first_col) {
  if constexpr (Bf16) {
    const uint16x4_t h = vld1_u16(reinterpret_cast<const uint16_t*>(scales) + first_col);
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
  } else {
    return vld1q_f32(reinterpret_cast<const float*>(scales) + first_col);
  }
}

// How one kernel runs a panel: Kern supplies kLhs, kPasses and
//   begin_block<Zeros, Pass>(const int16_t* sums, const int32_t* pairs)  accumulators := S·(-zx) [+ Z·(-Ex)]
//   step<Bits, Pass>(const SignedWeights<Bits>&, int t, const int8_t* x)   16 k
//   end_block<Bits, Bf16, Pass>(const uint8_t* scales, int block, int blocks)
//   store<Pass>(args, lhs, col)
// A pass is the part of the panel's columns a kernel keeps in registers at once (the GEMMs
// take the stream vectors of one parity per pass: half the columns, the other half next).
// kGroup > 0 fixes the group size at compile time (<= 128: one block per group), so one group
// is a straight block of code (the llvm-mca harness, bench/arm_mca).
struct Panel {
  const uint8_t* records;
  const uint8_t* sums;
};

template <int Bits, bool Zeros, bool Bf16, int Pass, int kGroup, class Kern>
inline __attribute__((always_inline)) void run_pass(Kern& kern, const PackedGeometry& g, const Lhs& lhs,
                                                    const Panel& panel) {
  static_assert(kGroup == 0 || (kGroup <= 128 && kGroup % 16 == 0), "one block per group");
  constexpr int mr = Kern::kLhs.mr;
  const int blocks = kGroup > 0 ? 1 : g.sums_per_group;
  const int bsteps = (kGroup > 0 ? kGroup : g.sum_block) / 16;
  const size_t scales = g.scales_offset, record = g.record_bytes;
  const uint8_t* rec = panel.records;
  const int16_t* sums = reinterpret_cast<const int16_t*>(panel.sums);
  const int32_t* pairs = lhs.pairs;
  const int8_t* x = lhs.q;
  for (int grp = 0; grp < g.groups; ++grp, rec += record) {
    const SignedWeights<Bits> w(g, rec, std::integral_constant<int, kGroup>{});
    for (int b = 0, t = 0; b < blocks; ++b, sums += 2 * kNr, pairs += mr) {
      kern.template begin_block<Zeros, Pass>(sums, pairs);
      if constexpr (kGroup > 0) {
        static_for<kGroup / 16>([&](auto S) { kern.template step<Bits, Pass>(w, S, x + S * 16 * mr); });
        x += kGroup * mr;
      } else {
        for (int s = 0; s < bsteps; ++s, ++t, x += 16 * mr) kern.template step<Bits, Pass>(w, t, x);
      }
      kern.template end_block<Bits, Bf16, Pass>(rec + scales, b, blocks);
    }
  }
}

template <class Kern, int Bits, bool Zeros, bool Bf16, int kGroup = 0>
void run_signed(const GemmShape& shape, const UKernelArgs& a, const Lhs& lhs) {
  const PackedGeometry& g = *shape.geo;
  const size_t panels = (a.n + kNr - 1) / kNr;
  for (size_t p = 0; p < panels; ++p) {
    const Panel panel{a.rhs + p * g.panel_bytes, a.sums + p * g.sums_stride};
    static_for<Kern::kPasses>([&](auto P) {
      Kern kern(lhs);
      run_pass<Bits, Zeros, Bf16, P, kGroup>(kern, g, lhs, panel);
      kern.template store<P>(a, lhs, p * kNr);
    });
  }
}

// The registered entry point: one instantiation per bit width, zero points and scale format.
template <class Kern, int Bits>
void run_signed_bits(const GemmShape& shape, const UKernelArgs& a, const Lhs& lhs) {
  const bool bf16 = shape.geo->scale_format == ScaleFormat::bf16;
  if (shape.geo->has_zeros) {
    return bf16 ? run_signed<Kern, Bits, true, true>(shape, a, lhs) : run_signed<Kern, Bits, true, false>(shape, a, lhs);
  }
  return bf16 ? run_signed<Kern, Bits, false, true>(shape, a, lhs) : run_signed<Kern, Bits, false, false>(shape, a, lhs);
}

template <class Kern>
void run(const GemmShape& shape, const UKernelArgs& a) {
  const Lhs lhs = lhs_parts(a.lhs, Kern::kLhs, shape);
  switch (shape.geo->bits) {
    case 1: return run_signed_bits<Kern, 1>(shape, a, lhs);
    case 2: return run_signed_bits<Kern, 2>(shape, a, lhs);
    case 3: return run_signed_bits<Kern, 3>(shape, a, lhs);
    case 4: return run_signed_bits<Kern, 4>(shape, a, lhs);
    case 5: return run_signed_bits<Kern, 5>(shape, a, lhs);
    case 6: return run_signed_bits<Kern, 6>(shape, a, lhs);
    case 7: return run_signed_bits<Kern, 7>(shape, a, lhs);
    default: return run_signed_bits<Kern, 8>(shape, a, lhs);
  }
}

}  // namespace
}  // namespace arm
}  // namespace lowbit
