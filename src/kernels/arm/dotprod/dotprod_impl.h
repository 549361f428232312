// NEON dot-product kernels (armv8.2-a+dotprod) on layout arm_dotprod_n8k4s16.
//
// Stream vector v of a record is k-block v/2 (4 k) of columns 4(v%2) .. 4(v%2)+3: one sdot by
// lane multiplies it with 4 k of one row. Column sums Sw come from an sdot with ones, row sums
// Sx with the LHS; the zero points enter as the accumulators' start value and one mls per
// group (common.h).
#pragma once

#include "kernels/arm/common.h"

namespace lowbit {
namespace arm {
namespace {

template <int MR>
struct DotKern {
  static_assert(MR == 1 || MR == 4, "row variants");
  static constexpr LhsFormat kLhs{MR, 4};
  // One step = one 16-byte LHS load: 4 k-blocks of the row (MR 1), or 1 k-block x 4 rows.
  static constexpr int kStep = MR == 1 ? 8 : 2;
  // MR 1 keeps two accumulator sets (even / odd k-blocks) so sdot latency is hidden.
  static constexpr int kSets = MR == 1 ? 2 : 1;
  static constexpr int kAcc = MR * kSets;

  const Lhs& lhs;
  int32x4_t acc[kAcc][2], sw[kSets][2];
  float32x4_t facc[MR][2];
  int32x4_t zx;
  const int8_t* qx;

  DotKern(const Lhs& l, const PackedGeometry&) : lhs(l) {
    for (auto& r : facc) r[0] = r[1] = vdupq_n_f32(0.0f);
    zx = MR == 4 ? vld1q_s32(l.zx) : vdupq_n_s32(l.zx[0]);
  }

  // acc = -c·E (set 0), Sw = 0.
  template <int Bits>
  void begin_group(const PackedGeometry& g, const uint8_t* rec, int grp) {
    int32x4_t c[2];
    load_col_offsets(g, rec, col_offset_base<Bits>(), c);
    const int32x4_t sx = MR == 4 ? vld1q_s32(lhs.sums + size_t(grp) * 4) : vdupq_n_s32(lhs.sums[grp]);
    const int32x4_t ne = neg_row_e(sx, zx, g.group_size), zero = vdupq_n_s32(0);
    static_for<2>([&](auto H) {
      static_for<MR>([&](auto R) { acc[R][H] = vmulq_laneq_s32(c[H], ne, R); });
      if constexpr (kSets == 2) acc[1][H] = zero;
      for (auto& t : sw) t[H] = zero;
    });
    qx = lhs.q + size_t(grp) * size_t(g.group_size) * MR;
  }

  template <int Bits>
  inline __attribute__((always_inline)) void step(const uint8x16_t* w, int s) {
    const int8x16_t ones = vdupq_n_s8(1);
    const int8x16_t x = vld1q_s8(qx + size_t(s) * 16);
    if constexpr (MR == 1) {
      static_for<4>([&](auto KB) {
        static_for<2>([&](auto H) {
          const int8x16_t b = dot_operand<Bits>(w[2 * KB + H]);
          acc[KB % 2][H] = vdotq_laneq_s32(acc[KB % 2][H], b, x, KB);
          sw[KB % 2][H] = vdotq_s32(sw[KB % 2][H], b, ones);
        });
      });
    } else {
      static_for<2>([&](auto H) {
        const int8x16_t b = dot_operand<Bits>(w[H]);
        static_for<4>([&](auto R) { acc[R][H] = vdotq_laneq_s32(acc[R][H], b, x, R); });
        sw[0][H] = vdotq_s32(sw[0][H], b, ones);
      });
    }
  }

  // d = acc - zx·Sw; acc_f = fma((float) d, s_w, acc_f).
  template <int Bits>
  void end_group(const PackedGeometry& g, const uint8_t* rec, int) {
    float32x4_t s[2];
    load_scales(g, rec, s);
    static_for<2>([&](auto H) {
      int32x4_t swh = sw[0][H];
      if constexpr (kSets == 2) swh = vaddq_s32(swh, sw[1][H]);
      static_for<MR>([&](auto R) {
        int32x4_t dot = acc[R][H];
        if constexpr (kSets == 2) dot = vaddq_s32(dot, acc[MR + R][H]);
        facc[R][H] = scale_acc(facc[R][H], vmlsq_laneq_s32(dot, swh, zx, R), s[H]);
      });
    });
  }

  void store(const UKernelArgs& a, const Lhs& l, size_t col) { store_panel<MR>(a, l, col, facc); }
};

}  // namespace
}  // namespace arm
}  // namespace lowbit
