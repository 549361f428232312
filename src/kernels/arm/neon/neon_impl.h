// NEON (armv8-a) kernels on layout arm_neon_n8k1s16: widening multiply-accumulate by lane.
//
// Stream vector v of a record is k = 2v, 2v+1, columns 0-7 each. Both operands are widened
// to exact int16 differences, w = qw - zw (ssubl) and x = qx - zx, so
//   d = Σ x·w   (smlal / smlal2 by lane into int32)
// needs no column sums and no correction. 4 int32 MACs per instruction.
#pragma once

#include "kernels/arm/common.h"

namespace lowbit {
namespace arm {
namespace {

template <int MR>
struct NeonKern {
  static_assert(MR == 1 || MR == 4, "row variants");
  static constexpr LhsFormat kLhs{MR, 1};
  // One step = one LHS load: 8 k of the row (MR 1) or 4 k x 4 rows (MR 4, interleaved k-major).
  static constexpr int kStep = MR == 1 ? 4 : 2;

  const Lhs& lhs;
  int32x4_t acc[MR][2];
  float32x4_t facc[MR][2];
  int16x8_t zx;       // MR 4: zx0..3 twice (lanes of two k); MR 1: zx0
  int8x16_t zw;       // the 8 columns' zero points, twice (two k per vector)
  const int8_t* qx;   // this group's LHS

  NeonKern(const Lhs& l, const PackedGeometry&) : lhs(l) {
    for (auto& r : facc) r[0] = r[1] = vdupq_n_f32(0.0f);
    if (MR == 4) {
      const int16x4_t z = vmovn_s32(vld1q_s32(l.zx));
      zx = vcombine_s16(z, z);
    } else {
      zx = vdupq_n_s16(int16_t(l.zx[0]));
    }
  }

  template <int Bits>
  void begin_group(const PackedGeometry& g, const uint8_t* rec, int grp) {
    for (auto& r : acc) r[0] = r[1] = vdupq_n_s32(0);
    const int8x8_t z = load_zeros(g, rec);
    zw = vcombine_s8(z, z);
    qx = lhs.q + size_t(grp) * size_t(g.group_size) * MR;
  }

  // acc[r] += w16 (8 columns of one k) · x[lane]
  template <int Lane>
  inline __attribute__((always_inline)) void mac(int r, int16x8_t w16, int16x8_t x) {
    acc[r][0] = vmlal_laneq_s16(acc[r][0], vget_low_s16(w16), x, Lane);
    acc[r][1] = vmlal_high_laneq_s16(acc[r][1], w16, x, Lane);
  }

  template <int Bits>
  inline __attribute__((always_inline)) void step(const uint8x16_t* w, int s) {
    // q = u - 2^(Bits-1) (u ^ 0x80 for 8 bits), then qw - zw widened: k even / odd halves.
    int16x8_t w16[2 * kStep];
    static_for<kStep>([&](auto V) {
      const int8x16_t q = Bits == 8 ? vreinterpretq_s8_u8(veorq_u8(w[V], vdupq_n_u8(0x80)))
                                    : vreinterpretq_s8_u8(vsubq_u8(w[V], vdupq_n_u8(1 << (Bits - 1))));
      w16[2 * V] = vsubl_s8(vget_low_s8(q), vget_low_s8(zw));
      w16[2 * V + 1] = vsubl_high_s8(q, zw);
    });
    if constexpr (MR == 1) {
      const int16x8_t x = vsubq_s16(vmovl_s8(vld1_s8(qx + size_t(s) * 8)), zx);
      static_for<8>([&](auto K) { mac<K>(0, w16[K], x); });
    } else {
      const int8x16_t xq = vld1q_s8(qx + size_t(s) * 16);
      const int16x8_t x[2] = {vsubq_s16(vmovl_s8(vget_low_s8(xq)), zx),
                              vsubq_s16(vmovl_high_s8(xq), zx)};
      static_for<4>([&](auto K) {
        static_for<4>([&](auto R) { mac<(K % 2) * 4 + R>(R, w16[K], x[K / 2]); });
      });
    }
  }

  template <int Bits>
  void end_group(const PackedGeometry& g, const uint8_t* rec, int) {
    float32x4_t sw[2];
    load_scales(g, rec, sw);
    for (int r = 0; r < MR; ++r)
      for (int h = 0; h < 2; ++h) facc[r][h] = scale_acc(facc[r][h], acc[r][h], sw[h]);
  }

  void store(const UKernelArgs& a, const Lhs& l, size_t col) { store_panel<MR>(a, l, col, facc); }
};

}  // namespace
}  // namespace arm
}  // namespace lowbit
