// Int8 matrix-multiply kernels (armv8.2-a+dotprod+i8mm) on layout arm_i8mm_n8k8s16_sums
// (signed_layout.h: operands 2^(8-b)·q, accumulators started at the zero-point correction).
//
// Stream vector v of a record is k-block v/4 (8 k) of the column pair v%4 (columns 2(v%4),
// 2(v%4)+1): exactly the right operand of smmla, which multiplies it with two rows of 8 k
// into a 2x2 tile [r0c0 r0c1 r1c0 r1c1].
//   GEMV (1 row): the 16 LHS bytes of a step are rows "k-block 0" and "k-block 1" of the left
//     operand; k-block 0's columns take lanes 0-1 of the tile, and k-block 1's take the same
//     lanes against the LHS halves swapped (one ext per 16 k). Lanes 2-3 are never read.
//   GEMM (MR rows): one pass per column-pair parity (pairs {p, p+2}), MR/2 row pairs x 2
//     column pairs of tiles, their float accumulators in the same tile layout.
#pragma once

#include "kernels/arm/signed_layout.h"

namespace lowbit {
namespace arm {
namespace {

struct MmlaGemv {
  static constexpr LhsFormat kLhs{1, 8};
  static constexpr int kPasses = 1, kPanels = 1;

  int32x4_t acc[4], dacc[2];  // acc: one per column pair, lanes 0-1
  float32x4_t facc[2], sc[2];

  explicit MmlaGemv(const Lhs&) { facc[0] = facc[1] = vdupq_n_f32(0.0f); }

  template <int, bool Zeros, bool Bf16, int>
  inline __attribute__((always_inline)) void begin_block(const Block<1>& blk) {
    const int16_t* sums = blk.sums[0];
    const int32_t* pairs = blk.pairs;
    static_for<2>([&](auto H) { sc[H] = load_scales4<Bf16>(blk.scales[0], 4 * H); });
    const int16x4_t p = vld1_s16(reinterpret_cast<const int16_t*>(pairs));  // -zx, -Ex
    // Lanes 0-1 of column pair c: columns 2c, 2c+1 (lanes 2-3 start anywhere: S is loaded
    // from column 2c on, running into Z for the last pair).
    static_for<4>([&](auto C) { acc[C] = vmull_lane_s16(vld1_s16(sums + 2 * C), p, 0); });
    if constexpr (Zeros) {
      const int16x8_t z = block_z(sums);
      const int16x4_t zc[4] = {vget_low_s16(z), vext_s16(vget_low_s16(z), vget_low_s16(z), 2),
                               vget_high_s16(z), vext_s16(vget_high_s16(z), vget_high_s16(z), 2)};
      static_for<4>([&](auto C) { acc[C] = vmlal_lane_s16(acc[C], zc[C], p, 1); });
    }
  }

  template <int Bits, int>
  inline __attribute__((always_inline)) void step(const SignedWeights<Bits> (&w)[1], int t, const int8_t* xp) {
    using W = SignedWeights<Bits>;
    const int8x16_t x = vld1q_s8(xp), xs = vextq_s8(x, x, 8);  // k-blocks (0, 1) and (1, 0)
    int8x16_t b[8];
    static_for<8>([&](auto V) { if constexpr (W::spare(V)) b[V] = w[0].template operand<V>(t); });
    static_for<8>([&](auto V) {
      if constexpr (!W::spare(V)) b[V] = w[0].template operand<V>(t);
      acc[V % 4] = vmmlaq_s32(acc[V % 4], V < 4 ? x : xs, b[V]);
    });
  }

  template <int Bits, int>
  inline __attribute__((always_inline)) void end_block(int b, int blocks) {
    static_for<2>([&](auto H) {  // columns 4H .. 4H+3: lanes 0-1 of pairs 2H and 2H+1
      const int32x4_t d = vreinterpretq_s32_s64(
          vzip1q_s64(vreinterpretq_s64_s32(acc[2 * H]), vreinterpretq_s64_s32(acc[2 * H + 1])));
      if (blocks == 1) {
        facc[H] = scale_scaled<8 - Bits>(facc[H], d, sc[H]);
      } else {
        dacc[H] = add_block<8 - Bits>(dacc[H], d, b == 0);
        if (b == blocks - 1) facc[H] = scale_scaled<0>(facc[H], dacc[H], sc[H]);
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
struct MmlaGemm {
  static_assert((MR == 4 || MR == 8) && MR <= LhsMR, "row variants");
  static constexpr LhsFormat kLhs{LhsMR, 8};
  static constexpr int kPasses = 2, kPanels = 1;
  static constexpr int kPairs = MR / 2;

  int16x4_t nzx[kPairs];  // -zx of the pair's rows: r, r, r+1, r+1
  int32x4_t acc[kPairs][2], dacc[kPairs][2];
  float32x4_t facc[kPairs][2], sc[2];

  explicit MmlaGemm(const Lhs& l) {
    static_for<kPairs>([&](auto P) {
      const int16x4_t z = vmovn_s32(vcombine_s32(vdup_n_s32(-l.zx[2 * P]), vdup_n_s32(-l.zx[2 * P + 1])));
      nzx[P] = z;
      facc[P][0] = facc[P][1] = vdupq_n_f32(0.0f);
    });
  }

  // Column pair Pass + 2J's values of an 8-column int16 vector, as [c, c+1, c, c+1].
  template <int Pass, int J>
  static int16x4_t pair_of(int16x8_t v) {
    return vreinterpret_s16_s32(vdup_laneq_s32(vreinterpretq_s32_s16(v), Pass + 2 * J));
  }

  template <int, bool Zeros, bool Bf16, int Pass>
  inline __attribute__((always_inline)) void begin_block(const Block<1>& blk) {
    const int16_t* sums = blk.sums[0];
    const int32_t* pairs = blk.pairs;
    static_for<2>([&](auto J) {
      sc[J] = pair_scales<Bf16, Pass, J>(blk.scales[0]);
      const int16x4_t sw = pair_of<Pass, J>(block_s(sums));
      static_for<kPairs>([&](auto P) { acc[P][J] = vmull_s16(sw, nzx[P]); });
      if constexpr (Zeros) {
        const int16x4_t zw = pair_of<Pass, J>(block_z(sums));
        static_for<kPairs>([&](auto P) {
          const int16x4_t p = vld1_s16(reinterpret_cast<const int16_t*>(pairs + 2 * P));
          acc[P][J] = vmlal_s16(acc[P][J], zw, vtrn2_s16(p, p));  // -Ex of r, r, r+1, r+1
        });
      }
    });
  }

  template <int Bits, int Pass>
  inline __attribute__((always_inline)) void step(const SignedWeights<Bits> (&w)[1], int t, const int8_t* xp) {
    using W = SignedWeights<Bits>;
    int8x16_t b[2][2];  // k-block, column pair Pass + 2J: stream vector 4kb + Pass + 2J
    static_for<4>([&](auto I) {
      if constexpr (W::spare(4 * (I / 2) + Pass + 2 * (I % 2))) b[I / 2][I % 2] = w[0].template operand<4 * (I / 2) + Pass + 2 * (I % 2)>(t);
    });
    static_for<2>([&](auto KB) {
      static_for<2>([&](auto J) {
        if constexpr (!W::spare(4 * KB + Pass + 2 * J)) b[KB][J] = w[0].template operand<4 * KB + Pass + 2 * J>(t);
      });
      static_for<kPairs>([&](auto P) {
        const int8x16_t x = vld1q_s8(xp + (KB * LhsMR + 2 * P) * 8);
        acc[P][0] = vmmlaq_s32(acc[P][0], x, b[KB][0]);
        acc[P][1] = vmmlaq_s32(acc[P][1], x, b[KB][1]);
      });
    });
  }

  // Scales of column pair Pass + 2J as [s_c, s_c+1, s_c, s_c+1].
  template <bool Bf16, int Pass, int J>
  static float32x4_t pair_scales(const uint8_t* scales) {
    constexpr int c = 2 * (Pass + 2 * J);
    if constexpr (Bf16) {
      const uint32x2_t h = vld1_dup_u32(reinterpret_cast<const uint32_t*>(scales + 2 * c));
      return vreinterpretq_f32_u32(vshll_n_u16(vreinterpret_u16_u32(h), 16));
    } else {
      return vreinterpretq_f32_u64(vld1q_dup_u64(reinterpret_cast<const uint64_t*>(scales + 4 * c)));
    }
  }

  template <int Bits, int Pass>
  inline __attribute__((always_inline)) void end_block(int b, int blocks) {
    static_for<2>([&](auto J) {
      const float32x4_t s = sc[J];
      if (blocks == 1) {
        static_for<kPairs>([&](auto P) { facc[P][J] = scale_scaled<8 - Bits>(facc[P][J], acc[P][J], s); });
      } else {
        static_for<kPairs>([&](auto P) { dacc[P][J] = add_block<8 - Bits>(dacc[P][J], acc[P][J], b == 0); });
        if (b == blocks - 1)
          static_for<kPairs>([&](auto P) { facc[P][J] = scale_scaled<0>(facc[P][J], dacc[P][J], s); });
      }
    });
  }

  // Row 2P+i: lanes 2i, 2i+1 of both tiles, columns 2Pass, 2Pass+1, 2Pass+4, 2Pass+5.
  template <int Pass>
  void store(const UKernelArgs& a, const Lhs& l, size_t col) {
    static_for<kPairs>([&](auto P) {
      const float64x2_t t0 = vreinterpretq_f64_f32(facc[P][0]), t1 = vreinterpretq_f64_f32(facc[P][1]);
      const float32x4_t rows[2] = {vreinterpretq_f32_f64(vzip1q_f64(t0, t1)), vreinterpretq_f32_f64(vzip2q_f64(t0, t1))};
      static_for<2>([&](auto I) {
        constexpr int r = 2 * P + I;
        if (size_t(r) < a.m) store_lanes(a, l.sx[r], r, col, Cols{{2 * Pass, 2 * Pass + 1, 2 * Pass + 4, 2 * Pass + 5}}, rows[I]);
      });
    });
  }
};

}  // namespace
}  // namespace arm
}  // namespace lowbit
