// NEON dot-product kernels (armv8.2-a+dotprod) on layout arm_dotprod_n8k4s16_sums
// (signed_layout.h: operands 2^(8-b)·q, accumulators started at the zero-point correction).
//
// Stream vector v of a record is k-block v/2 (4 k) of columns 4(v%2) .. 4(v%2)+3: one sdot by
// lane multiplies it with 4 k of one row.
//   GEMV (1 row): both column halves at once; Chains accumulators per half (k-blocks taken in
//     turn), so sdots into one accumulator are Chains apart (2 for in-order cores: 4 chains in
//     all cover the sdot latency of Cortex-A55).
//   GEMM (MR rows): one column half per pass, MR accumulators (one per row) and MR float
//     accumulators live in registers; the half's operand (one shift or mask) feeds MR sdots.
#pragma once

#include "kernels/arm/signed_layout.h"

namespace lowbit {
namespace arm {
namespace {

template <int Chains>
struct DotGemv {
  static constexpr LhsFormat kLhs{1, 4};
  static constexpr int kPasses = 1;

  int32x4_t acc[2][Chains], dacc[2];
  float32x4_t facc[2];

  explicit DotGemv(const Lhs&) { facc[0] = facc[1] = vdupq_n_f32(0.0f); }

  template <bool Zeros, int>
  inline __attribute__((always_inline)) void begin_block(const int16_t* sums, const int32_t* pairs) {
    const int16x4_t p = vld1_s16(reinterpret_cast<const int16_t*>(pairs));  // -zx, -Ex
    const int16x8_t s = block_s(sums);
    acc[0][0] = vmull_lane_s16(vget_low_s16(s), p, 0);
    acc[1][0] = vmull_high_lane_s16(s, p, 0);
    if constexpr (Zeros) {
      const int16x8_t z = block_z(sums);
      acc[0][0] = vmlal_lane_s16(acc[0][0], vget_low_s16(z), p, 1);
      acc[1][0] = vmlal_high_lane_s16(acc[1][0], z, p, 1);
    }
    static_for<Chains - 1>([&](auto C) { acc[0][C + 1] = acc[1][C + 1] = vdupq_n_s32(0); });
  }

  template <int Bits, int>
  inline __attribute__((always_inline)) void step(const SignedWeights<Bits>& w, int t, const int8_t* xp) {
    const int8x16_t x = vld1q_s8(xp);
    static_for<4>([&](auto KB) {
      static_for<2>([&](auto H) {
        int32x4_t& a = acc[H][KB % Chains];
        a = vdotq_laneq_s32(a, w.template op<2 * KB + H>(t), x, KB);
      });
    });
  }

  template <int Bits, bool Bf16, int>
  inline __attribute__((always_inline)) void end_block(const uint8_t* scales, int b, int blocks) {
    static_for<2>([&](auto H) {
      int32x4_t d = acc[H][0];
      static_for<Chains - 1>([&](auto C) { d = vaddq_s32(d, acc[H][C + 1]); });
      if (blocks == 1) {
        facc[H] = scale_scaled<8 - Bits>(facc[H], d, load_scales4<Bf16>(scales, 4 * H));
      } else {
        dacc[H] = add_block<8 - Bits>(dacc[H], d, b == 0);
        if (b == blocks - 1) facc[H] = scale_scaled<0>(facc[H], dacc[H], load_scales4<Bf16>(scales, 4 * H));
      }
    });
  }

  template <int>
  void store(const UKernelArgs& a, const Lhs& l, size_t col) {
    static_for<2>([&](auto H) { store_lanes(a, l.sx[0], 0, col, Cols{{4 * H, 4 * H + 1, 4 * H + 2, 4 * H + 3}}, facc[H]); });
  }
};

// MR rows computed of an LHS block of LhsMR rows (the 4-row code runs on 8-row blocks).
template <int MR, int LhsMR = MR>
struct DotGemm {
  static_assert((MR == 4 || MR == 8) && MR <= LhsMR, "row variants");
  static constexpr LhsFormat kLhs{LhsMR, 4};
  static constexpr int kPasses = 2;

  int32x4_t acc[MR], dacc[MR];
  float32x4_t facc[MR];

  explicit DotGemm(const Lhs&) {
    for (auto& f : facc) f = vdupq_n_f32(0.0f);
  }

  template <bool Zeros, int Pass>
  inline __attribute__((always_inline)) void begin_block(const int16_t* sums, const int32_t* pairs) {
    const int16x4_t sw = vld1_s16(sums + 4 * Pass), zw = Zeros ? vld1_s16(sums + kNr + 4 * Pass) : sw;
    int16x8_t p[MR / 4];  // lanes 2r, 2r+1: -zx, -Ex of row r
    static_for<MR / 4>([&](auto Q) { p[Q] = vld1q_s16(reinterpret_cast<const int16_t*>(pairs + 4 * Q)); });
    static_for<MR>([&](auto R) {
      acc[R] = vmull_laneq_s16(sw, p[R / 4], 2 * (R % 4));
      if constexpr (Zeros) acc[R] = vmlal_laneq_s16(acc[R], zw, p[R / 4], 2 * (R % 4) + 1);
    });
  }

  template <int Bits, int Pass>
  inline __attribute__((always_inline)) void step(const SignedWeights<Bits>& w, int t, const int8_t* xp) {
    static_for<4>([&](auto KB) {
      const int8x16_t b = w.template op<2 * KB + Pass>(t);
      static_for<MR / 4>([&](auto Q) {
        const int8x16_t x = vld1q_s8(xp + (KB * LhsMR + 4 * Q) * 4);
        static_for<4>([&](auto L) { acc[4 * Q + L] = vdotq_laneq_s32(acc[4 * Q + L], b, x, L); });
      });
    });
  }

  template <int Bits, bool Bf16, int Pass>
  inline __attribute__((always_inline)) void end_block(const uint8_t* scales, int b, int blocks) {
    const float32x4_t s = load_scales4<Bf16>(scales, 4 * Pass);
    if (blocks == 1) {
      static_for<MR>([&](auto R) { facc[R] = scale_scaled<8 - Bits>(facc[R], acc[R], s); });
    } else {
      static_for<MR>([&](auto R) { dacc[R] = add_block<8 - Bits>(dacc[R], acc[R], b == 0); });
      if (b == blocks - 1) static_for<MR>([&](auto R) { facc[R] = scale_scaled<0>(facc[R], dacc[R], s); });
    }
  }

  template <int Pass>
  void store(const UKernelArgs& a, const Lhs& l, size_t col) {
    static_for<MR>([&](auto R) {
      if (size_t(R) < a.m) store_lanes(a, l.sx[R], R, col, Cols{{4 * Pass, 4 * Pass + 1, 4 * Pass + 2, 4 * Pass + 3}}, facc[R]);
    });
  }
};

}  // namespace
}  // namespace arm
}  // namespace lowbit
