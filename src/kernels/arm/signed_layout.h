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
// format/lhs_layout.h), with S = 2^(8-b)·Σq and Z = 2^(8-b)·zw from the packed sums:
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

constexpr bool in_steps(int bits) { return bits == 3 || (bits >= 5 && bits <= 7); }

// Which stream vectors of a step (bit v) have bits in chunk c of a b-bit step.
constexpr unsigned vectors_in_chunk(int bits, int c) {
  unsigned m = 0;
  for (int v = 0; v < 8; ++v)
    for (int i = 0; i < bits; ++i)
      if ((in_steps(bits) ? step_bit(bits, v, i).chunk : v / (8 / bits)) == c) m |= 1u << v;
  return m;
}

// The records of one panel for b-bit weights, 16 k at a time ("steps": 8 stream vectors of 16
// values; stream vector v of a record is values [16v, 16v + 16)): a step is b chunks of 16
// bytes, one plane at 1, 2, 4, 8 bits and odd_width_steps at 3, 5, 6, 7 (format/layout.h). A
// step's chunks are loaded first (Chunks), then its operands built from them: in-order cores
// want the loads well ahead of their use, and the unpacking of a step grouped.
template <int Bits>
struct SignedWeights {
  struct Chunks {
    uint8x16_t c[Bits];
  };
  const uint8_t* rec = nullptr;

  SignedWeights() = default;
  SignedWeights(const PackedGeometry& g, const uint8_t* record) : rec(record + g.planes[0].offset) {}

  // The chunks of step t that the operands in Need (a bit mask of V) read. Own: loads of their
  // own, which the compiler may not merge with other operands' loads of the same chunks (a
  // merged load would stay live, in a register, from one operand to the other).
  template <unsigned Need = 0xFFu, bool Own = false>
  inline __attribute__((always_inline)) Chunks load(int t) const {
    const uint8_t* base = rec;
    if constexpr (Own) asm("" : "+r"(base));
    Chunks k;
    static_for<Bits>([&](auto C) {
      if constexpr ((vectors_in_chunk(Bits, C) & Need) != 0) k.c[C] = vld1q_u8(base + (size_t(t) * Bits + C) * 16);
    });
    return k;
  }

  // Whether vector V of a step lives in the other vectors' spare bits (its operand takes a
  // chain of shift-and-inserts, not one instruction).
  static constexpr bool spare(int v) { return in_steps(Bits) && v >= (Bits == 3 ? 6 : Bits); }

  // The operand of vector V of step t from loads of its own chunks. The out-of-order GEMMs
  // make the spare vectors' operands first in a step (their chains then overlap the other
  // vectors' dot products) and the others where they are used, so few chunks stay live.
  template <int V>
  inline __attribute__((always_inline)) int8x16_t operand(int t) const {
    return op<V>(load<1u << V, spare(V)>(t));
  }

  // The length of the lowest run of value bits of spare vector V.
  template <int V>
  static constexpr int first_run() {
    int n = 1;
    while (n < Bits && step_bit(Bits, V, n).chunk == step_bit(Bits, V, 0).chunk &&
           step_bit(Bits, V, n).bit == step_bit(Bits, V, 0).bit + n)
      ++n;
    return n;
  }

  // The operand 2^(8-Bits)·q of stream vector V (0..7) of a step: a masked or shifted field
  // (one instruction), or at odd widths, for the vectors kept in the other fields' spare bits,
  // their runs of bits shifted down and inserted from the lowest up (sli keeps what is below).
  template <int V>
  static inline __attribute__((always_inline)) int8x16_t op(const Chunks& k) {
    if constexpr (!in_steps(Bits)) {
      constexpr int f = 8 / Bits;
      return vreinterpretq_s8_u8(place_low<Bits, V % f, 8 - Bits>(k.c[V / f]));
    } else if constexpr (Bits == 3 && V < 6) {
      return vreinterpretq_s8_u8(V % 2 == 0 ? vandq_u8(k.c[V / 2], vdupq_n_u8(0xE0)) : vshlq_n_u8(k.c[V / 2], 5));
    } else if constexpr (Bits != 3 && V < Bits) {
      return vreinterpretq_s8_u8(vandq_u8(k.c[V], vdupq_n_u8(uint8_t(0xFF << (8 - Bits)))));
    } else {
      // A run: consecutive value bits at consecutive bits of one chunk. The lowest run is
      // shifted down then up into place (zeros below it), each next one shifted down to bit 0
      // and inserted at its place.
      uint8x16_t x = k.c[0];
      static_for<Bits>([&](auto I) {
        constexpr StepBit sb = step_bit(Bits, V, I);
        constexpr bool starts = I == 0 || step_bit(Bits, V, I - 1).chunk != sb.chunk ||
                                step_bit(Bits, V, I - 1).bit + 1 != sb.bit;
        constexpr int pos = 8 - Bits + I;
        const uint8x16_t c = k.c[sb.chunk];
        if constexpr (I == 0 && sb.bit == 0) {
          x = vshlq_n_u8(c, pos);
        } else if constexpr (I == 0) {  // the run masked (either vector pipe), then one shift
          const uint8x16_t m = vandq_u8(c, vdupq_n_u8(uint8_t(((1u << first_run<V>()) - 1) << sb.bit)));
          if constexpr (pos > sb.bit) x = vshlq_n_u8(m, pos - sb.bit);
          else x = vshrq_n_u8(m, sb.bit - pos);
        } else if constexpr (starts && sb.bit == 0) {
          x = vsliq_n_u8(x, c, pos);
        } else if constexpr (starts) {  // clang checks the immediate of a shift never taken: no ?:
          x = vsliq_n_u8(x, vshrq_n_u8(c, sb.bit), pos);
        }
      });
      return vreinterpretq_s8_u8(x);
    }
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

// Per-group scales of the 8 columns: one 16-byte load at bf16.
template <bool Bf16>
inline void load_scales8(const uint8_t* scales, float32x4_t (&s)[2]) {
  if constexpr (Bf16) {
    const uint16x8_t h = vld1q_u16(reinterpret_cast<const uint16_t*>(scales));
    s[0] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
    s[1] = vreinterpretq_f32_u32(vshll_high_n_u16(h, 16));
  } else {
    s[0] = vld1q_f32(reinterpret_cast<const float*>(scales));
    s[1] = vld1q_f32(reinterpret_cast<const float*>(scales) + 4);
  }
}

// How one kernel runs its panels: Kern supplies kLhs, kPasses, kPanels and
//   begin_block<Bits, Zeros, Bf16, Pass>(const Block<kPanels>&)  accumulators := S·(-zx) [+ Z·(-Ex)];
//                                                        the group's scales loaded
//   step<Bits, Pass>(const SignedWeights<Bits> (&)[kPanels], int t, const int8_t* x)   16 k
//   end_block<Bits, Pass>(int block, int blocks)            fma into the float accumulators
//   store<Pass>(args, lhs, col)
// A pass is the part of a panel's columns a kernel keeps in registers at once (the GEMMs take
// the stream vectors of one parity per pass: half the columns, the other half next); a kernel
// may run kPanels panels side by side (the GEMVs: 2, then Kern::OnePanel for an odd last one).
// kGroup > 0 fixes the group size at compile time (<= 128: one block per group), so one group
// is a straight block of code (the llvm-mca harness, bench/arm_mca).
template <int P>
struct Block {
  const int16_t* sums[P];   // the block's column sums, per panel
  const int32_t* pairs;     // the LHS pairs of the block
  const uint8_t* scales[P]; // the group's scales, per panel
};

template <int Bits, bool Zeros, bool Bf16, int Pass, int kGroup, class Kern>
inline __attribute__((always_inline)) void run_pass(Kern& kern, const PackedGeometry& g, const Lhs& lhs,
                                                    const uint8_t* const (&records)[Kern::kPanels],
                                                    const uint8_t* const (&sums)[Kern::kPanels]) {
  static_assert(kGroup == 0 || (kGroup <= 128 && kGroup % 16 == 0), "one block per group");
  constexpr int mr = Kern::kLhs.mr, np = Kern::kPanels;
  const int blocks = kGroup > 0 ? 1 : g.sums_per_group;
  const int bsteps = (kGroup > 0 ? kGroup : g.sum_block) / 16;
  const size_t scales = g.scales_offset, record = g.record_bytes;
  const uint8_t* rec[np];
  Block<np> blk;
  static_for<np>([&](auto P) {
    rec[P] = records[P];
    blk.sums[P] = reinterpret_cast<const int16_t*>(sums[P]);
  });
  blk.pairs = lhs.pairs;
  const int8_t* x = lhs.q;
  for (int grp = 0; grp < g.groups; ++grp) {
    SignedWeights<Bits> w[np];
    static_for<np>([&](auto P) {
      w[P] = SignedWeights<Bits>(g, rec[P]);
      blk.scales[P] = rec[P] + scales;
      rec[P] += record;
    });
    for (int b = 0, t = 0; b < blocks; ++b) {
      kern.template begin_block<Bits, Zeros, Bf16, Pass>(blk);
      if constexpr (kGroup > 0) {
        static_for<kGroup / 16>([&](auto S) { kern.template step<Bits, Pass>(w, S, x + S * 16 * mr); });
        x += kGroup * mr;
      } else {
        for (int s = 0; s < bsteps; ++s, ++t, x += 16 * mr) kern.template step<Bits, Pass>(w, t, x);
      }
      kern.template end_block<Bits, Pass>(b, blocks);
      static_for<np>([&](auto P) { blk.sums[P] += 2 * kNr; });
      blk.pairs += mr;
    }
  }
}

// Panels [p, p + Kern::kPanels) of the call, every pass.
template <class Kern, int Bits, bool Zeros, bool Bf16, int kGroup>
inline __attribute__((always_inline)) void run_panels(const GemmShape& shape, const UKernelArgs& a,
                                                      const Lhs& lhs, size_t p) {
  const PackedGeometry& g = *shape.geo;
  const uint8_t* records[Kern::kPanels];
  const uint8_t* sums[Kern::kPanels];
  static_for<Kern::kPanels>([&](auto P) {
    records[P] = a.rhs + (p + P) * g.panel_bytes;
    sums[P] = a.sums + (p + P) * g.sums_stride;
  });
  static_for<Kern::kPasses>([&](auto Pass) {
    Kern kern(lhs);
    run_pass<Bits, Zeros, Bf16, Pass, kGroup>(kern, g, lhs, records, sums);
    kern.template store<Pass>(a, lhs, p * kNr);
  });
}

template <class Kern, int Bits, bool Zeros, bool Bf16, int kGroup = 0>
void run_signed(const GemmShape& shape, const UKernelArgs& a, const Lhs& lhs) {
  const size_t panels = (a.n + kNr - 1) / kNr;
  size_t p = 0;
  for (; p + Kern::kPanels <= panels; p += Kern::kPanels) run_panels<Kern, Bits, Zeros, Bf16, kGroup>(shape, a, lhs, p);
  if constexpr (Kern::kPanels > 1)
    for (; p < panels; ++p) run_panels<typename Kern::OnePanel, Bits, Zeros, Bf16, kGroup>(shape, a, lhs, p);
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
  with_bits(shape.geo->bits, [&](auto bits) { run_signed_bits<Kern, bits>(shape, a, lhs); });
}

}  // namespace
}  // namespace arm
}  // namespace lowbit
