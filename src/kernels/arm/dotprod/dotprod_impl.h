// NEON dot-product kernels (armv8.2-a+dotprod) on layout arm_dotprod_n8k4s16_sums
// (signed_layout.h: operands 2^(8-b)·q, accumulators started at the zero-point correction).
//
// Stream vector v of a record is k-block v/2 (4 k) of columns 4(v%2) .. 4(v%2)+3: one sdot by
// lane multiplies it with 4 k of one row.
//   GEMV (1 row): both column halves at once.
//   GEMM (MR rows): one column half per pass, MR accumulators (one per row) and MR float
//     accumulators live in registers; the half's operand (one shift or mask) feeds MR sdots.
//
// InOrder (the _a55 kernels): the same arithmetic, laid out for an in-order core that issues
// about one instruction per cycle and stalls on every operand not ready yet (the Cortex-A55
// model of llvm-mca-19: load-to-use 3 cycles, sdot-to-sdot 4, and a vector shift or mask
// between two sdots costs one or two extra cycles). A step loads its weight chunks first, then
// unpacks them all, then runs its sdots: the GEMV over 2 accumulators per column half (4
// chains, each sdot 4 apart from the previous one into its accumulator), the GEMM with its
// 8 LHS loads scheduled 3 instructions ahead of their use (dot_8x4_step). GCC's schedulers
// would interleave these phases again (its A55 model is another one), so values are pinned
// between phases and the last phase is an asm block.
#pragma once

#include "kernels/arm/signed_layout.h"

namespace lowbit {
namespace arm {
namespace {

// A compiler barrier for one value: computed before this point, used after it.
template <class T>
inline __attribute__((always_inline)) void pin(T& v) {
  asm volatile("" : "+w"(v));
}

// acc[r] += Σ_kb b[kb] · (4 k of row r in k-block kb), rows 0-7, k-blocks 0-3 of one step: the
// LHS of the step is 8 vectors at x (k-block kb, rows 4h..4h+3 at 32kb + 16h), each loaded 3
// instructions before its first sdot, every sdot 4 after the previous one into its accumulator.
inline __attribute__((always_inline)) void dot_8x4_step(int32x4_t (&acc)[8], const int8x16_t (&b)[4],
                                                       const int8_t* x) {
  int8x16_t t0, t1, t2, t3;
  asm("ldr %q[t0], [%[x]]\n\t"
      "ldr %q[t1], [%[x], #16]\n\t"
      "ldr %q[t2], [%[x], #32]\n\t"
      "sdot %[a0].4s, %[b0].16b, %[t0].4b[0]\n\t"
      "sdot %[a1].4s, %[b0].16b, %[t0].4b[1]\n\t"
      "sdot %[a2].4s, %[b0].16b, %[t0].4b[2]\n\t"
      "sdot %[a3].4s, %[b0].16b, %[t0].4b[3]\n\t"
      "ldr %q[t3], [%[x], #48]\n\t"
      "sdot %[a4].4s, %[b0].16b, %[t1].4b[0]\n\t"
      "sdot %[a5].4s, %[b0].16b, %[t1].4b[1]\n\t"
      "sdot %[a6].4s, %[b0].16b, %[t1].4b[2]\n\t"
      "sdot %[a7].4s, %[b0].16b, %[t1].4b[3]\n\t"
      "ldr %q[t0], [%[x], #64]\n\t"
      "sdot %[a0].4s, %[b1].16b, %[t2].4b[0]\n\t"
      "sdot %[a1].4s, %[b1].16b, %[t2].4b[1]\n\t"
      "sdot %[a2].4s, %[b1].16b, %[t2].4b[2]\n\t"
      "sdot %[a3].4s, %[b1].16b, %[t2].4b[3]\n\t"
      "ldr %q[t1], [%[x], #80]\n\t"
      "sdot %[a4].4s, %[b1].16b, %[t3].4b[0]\n\t"
      "sdot %[a5].4s, %[b1].16b, %[t3].4b[1]\n\t"
      "sdot %[a6].4s, %[b1].16b, %[t3].4b[2]\n\t"
      "sdot %[a7].4s, %[b1].16b, %[t3].4b[3]\n\t"
      "ldr %q[t2], [%[x], #96]\n\t"
      "sdot %[a0].4s, %[b2].16b, %[t0].4b[0]\n\t"
      "sdot %[a1].4s, %[b2].16b, %[t0].4b[1]\n\t"
      "sdot %[a2].4s, %[b2].16b, %[t0].4b[2]\n\t"
      "sdot %[a3].4s, %[b2].16b, %[t0].4b[3]\n\t"
      "ldr %q[t3], [%[x], #112]\n\t"
      "sdot %[a4].4s, %[b2].16b, %[t1].4b[0]\n\t"
      "sdot %[a5].4s, %[b2].16b, %[t1].4b[1]\n\t"
      "sdot %[a6].4s, %[b2].16b, %[t1].4b[2]\n\t"
      "sdot %[a7].4s, %[b2].16b, %[t1].4b[3]\n\t"
      "sdot %[a0].4s, %[b3].16b, %[t2].4b[0]\n\t"
      "sdot %[a1].4s, %[b3].16b, %[t2].4b[1]\n\t"
      "sdot %[a2].4s, %[b3].16b, %[t2].4b[2]\n\t"
      "sdot %[a3].4s, %[b3].16b, %[t2].4b[3]\n\t"
      "sdot %[a4].4s, %[b3].16b, %[t3].4b[0]\n\t"
      "sdot %[a5].4s, %[b3].16b, %[t3].4b[1]\n\t"
      "sdot %[a6].4s, %[b3].16b, %[t3].4b[2]\n\t"
      "sdot %[a7].4s, %[b3].16b, %[t3].4b[3]"
      : [a0] "+w"(acc[0]), [a1] "+w"(acc[1]), [a2] "+w"(acc[2]), [a3] "+w"(acc[3]), [a4] "+w"(acc[4]),
        [a5] "+w"(acc[5]), [a6] "+w"(acc[6]), [a7] "+w"(acc[7]), [t0] "=&w"(t0), [t1] "=&w"(t1),
        [t2] "=&w"(t2), [t3] "=&w"(t3)
      : [b0] "w"(b[0]), [b1] "w"(b[1]), [b2] "w"(b[2]), [b3] "w"(b[3]), [x] "r"(x),
        "m"(*reinterpret_cast<const int8_t(*)[128]>(x)));
}


// The sdots of one in-order GEMV step: acc[i] += b[i + 4kb... in this order: every sdot 4 after
// the previous one into its accumulator. 2 panels: acc[2p+h] += b[p][2kb+h] · x[kb];
// 1 panel: 2 chains per half, acc[2c+h] += b[2kb+h] · x[kb] with c = kb % 2.
#define LOWBIT_SDOT(a, b, l) "sdot %[a" #a "].4s, %[b" #b "].16b, %[x].4b[" #l "]\n\t"
inline __attribute__((always_inline)) void dot_1x16_step(int32x4_t (&acc)[4], const int8x16_t (&b)[16],
                                                        int8x16_t x) {
  asm(LOWBIT_SDOT(0, 0, 0) LOWBIT_SDOT(1, 1, 0) LOWBIT_SDOT(2, 8, 0) LOWBIT_SDOT(3, 9, 0)
      LOWBIT_SDOT(0, 2, 1) LOWBIT_SDOT(1, 3, 1) LOWBIT_SDOT(2, 10, 1) LOWBIT_SDOT(3, 11, 1)
      LOWBIT_SDOT(0, 4, 2) LOWBIT_SDOT(1, 5, 2) LOWBIT_SDOT(2, 12, 2) LOWBIT_SDOT(3, 13, 2)
      LOWBIT_SDOT(0, 6, 3) LOWBIT_SDOT(1, 7, 3) LOWBIT_SDOT(2, 14, 3) LOWBIT_SDOT(3, 15, 3)
      : [a0] "+w"(acc[0]), [a1] "+w"(acc[1]), [a2] "+w"(acc[2]), [a3] "+w"(acc[3])
      : [b0] "w"(b[0]), [b1] "w"(b[1]), [b2] "w"(b[2]), [b3] "w"(b[3]), [b4] "w"(b[4]), [b5] "w"(b[5]),
        [b6] "w"(b[6]), [b7] "w"(b[7]), [b8] "w"(b[8]), [b9] "w"(b[9]), [b10] "w"(b[10]), [b11] "w"(b[11]),
        [b12] "w"(b[12]), [b13] "w"(b[13]), [b14] "w"(b[14]), [b15] "w"(b[15]), [x] "w"(x));
}
inline __attribute__((always_inline)) void dot_1x8_step(int32x4_t (&acc)[4], const int8x16_t (&b)[8],
                                                       int8x16_t x) {
  asm(LOWBIT_SDOT(0, 0, 0) LOWBIT_SDOT(1, 1, 0) LOWBIT_SDOT(2, 2, 1) LOWBIT_SDOT(3, 3, 1)
      LOWBIT_SDOT(0, 4, 2) LOWBIT_SDOT(1, 5, 2) LOWBIT_SDOT(2, 6, 3) LOWBIT_SDOT(3, 7, 3)
      : [a0] "+w"(acc[0]), [a1] "+w"(acc[1]), [a2] "+w"(acc[2]), [a3] "+w"(acc[3])
      : [b0] "w"(b[0]), [b1] "w"(b[1]), [b2] "w"(b[2]), [b3] "w"(b[3]), [b4] "w"(b[4]), [b5] "w"(b[5]),
        [b6] "w"(b[6]), [b7] "w"(b[7]), [x] "w"(x));
}
#undef LOWBIT_SDOT

// Panels side by side (2: 16 columns per step; 1: the odd last panel). In order, a lone panel
// keeps 2 accumulators per half, added at the block's end, for 4 independent chains.
template <bool InOrder, int Panels = 2>
struct DotGemv {
  static constexpr LhsFormat kLhs{1, 4};
  static constexpr int kPasses = 1, kPanels = Panels;
  static constexpr int kChains = InOrder && Panels == 1 ? 2 : 1;  // accumulators per column half
  static constexpr int kAcc = 2 * Panels * kChains;                // acc[(chain·Panels + panel)·2 + half]
  using OnePanel = DotGemv<InOrder, 1>;

  int32x4_t acc[kAcc], dacc[Panels][2];
  float32x4_t facc[Panels][2], sc[Panels][2];

  explicit DotGemv(const Lhs&) {
    for (auto& f : facc) f[0] = f[1] = vdupq_n_f32(0.0f);
  }

  // In-order cores take the 4-bit high nibbles as q (an arithmetic shift, which they issue
  // two at a time) rather than 16·q (a mask, one at a time): that half then counts in units.
  template <int Bits>
  static constexpr int shift(int h) { return InOrder && Bits == 4 && h == 1 ? 0 : 8 - Bits; }

  template <int Bits, bool Zeros, bool Bf16, int>
  inline __attribute__((always_inline)) void begin_block(const Block<Panels>& blk) {
    int16x4_t p = vld1_s16(reinterpret_cast<const int16_t*>(blk.pairs));  // -zx, -Ex
    int16x8_t s[Panels], z[Panels];  // S, Z of the panel's 8 columns
    static_for<Panels>([&](auto P) {
      s[P] = block_s(blk.sums[P]);
      z[P] = Zeros ? block_z(blk.sums[P]) : s[P];
      if constexpr (InOrder) pin(s[P]), pin(z[P]);
    });
    if constexpr (InOrder) pin(p);  // these loads, then the scales' (used at the block's end) hide their latency
    static_for<Panels>([&](auto P) {
      load_scales8<Bf16>(blk.scales[P], sc[P]);
      if constexpr (InOrder) pin(sc[P][0]), pin(sc[P][1]);
    });
    static_for<Panels>([&](auto P) {
      int16x8_t sh = s[P], zh = z[P];  // the high half's: in units when shift() says so
      if constexpr (shift<Bits>(1) != 8 - Bits) {  // sums of 2^(8-b)·q, exact multiples
        sh = vshrq_n_s16(sh, 8 - Bits - shift<Bits>(1));
        zh = vshrq_n_s16(zh, 8 - Bits - shift<Bits>(1));
      }
      acc[2 * P] = vmull_lane_s16(vget_low_s16(s[P]), p, 0);
      acc[2 * P + 1] = vmull_high_lane_s16(sh, p, 0);
      if constexpr (Zeros) {
        acc[2 * P] = vmlal_lane_s16(acc[2 * P], vget_low_s16(z[P]), p, 1);
        acc[2 * P + 1] = vmlal_high_lane_s16(acc[2 * P + 1], zh, p, 1);
      }
    });
    static_for<kAcc - 2 * Panels>([&](auto I) { acc[2 * Panels + I] = vdupq_n_s32(0); });
  }

  template <int Bits, int>
  inline __attribute__((always_inline)) void step(const SignedWeights<Bits> (&w)[Panels], int t, const int8_t* xp) {
    using W = SignedWeights<Bits>;
    int8x16_t x = vld1q_s8(xp);
    // All chunks, then all operands by kind (low halves, then high): at odd widths the spare
    // vectors' chains then overlap the direct ones' masks.
    typename W::Chunks k[Panels];
    static_for<Panels>([&](auto P) { k[P] = w[P].template load<>(t); });
    if constexpr (InOrder) {
      static_for<Panels>([&](auto P) { static_for<Bits>([&](auto C) { pin(k[P].c[C]); }); });
      pin(x);
    }
    int8x16_t b[8 * Panels];  // operands b[8p + 2kb + h]
    static_for<2>([&](auto H) {
      static_for<Panels>([&](auto P) {
        static_for<4>([&](auto KB) {
          if constexpr (shift<Bits>(H) == 0 && Bits == 4) b[8 * P + 2 * KB + H] = vshrq_n_s8(vreinterpretq_s8_u8(k[P].c[KB]), 4);
          else b[8 * P + 2 * KB + H] = W::template op<2 * KB + H>(k[P]);
        });
      });
    });
    if constexpr (InOrder && Panels == 2) {
      dot_1x16_step(acc, b, x);
    } else if constexpr (InOrder) {
      dot_1x8_step(acc, b, x);
    } else {
      static_for<4>([&](auto KB) {
        static_for<Panels>([&](auto P) {
          static_for<2>([&](auto H) { acc[2 * P + H] = vdotq_laneq_s32(acc[2 * P + H], b[8 * P + 2 * KB + H], x, KB); });
        });
      });
    }
  }

  template <int Bits, int>
  inline __attribute__((always_inline)) void end_block(int b, int blocks) {
    int32x4_t d[Panels][2];
    static_for<Panels>([&](auto P) {
      static_for<2>([&](auto H) {
        d[P][H] = acc[2 * P + H];
        static_for<kChains - 1>([&](auto C) { d[P][H] = vaddq_s32(d[P][H], acc[2 * Panels * (C + 1) + 2 * P + H]); });
        if constexpr (InOrder) pin(d[P][H]);  // every half's steps side by side
      });
    });
    static_for<Panels>([&](auto P) {
      static_for<2>([&](auto H) {
        if (blocks == 1) {
          facc[P][H] = scale_scaled<shift<Bits>(H)>(facc[P][H], d[P][H], sc[P][H]);
        } else {
          dacc[P][H] = add_block<shift<Bits>(H)>(dacc[P][H], d[P][H], b == 0);
          if (b == blocks - 1) facc[P][H] = scale_scaled<0>(facc[P][H], dacc[P][H], sc[P][H]);
        }
      });
    });
  }

  template <int>
  void store(const UKernelArgs& a, const Lhs& l, size_t col) {
    static_for<Panels>([&](auto P) {
      static_for<2>([&](auto H) {
        store_lanes(a, l.sx[0], 0, col + kNr * P, Cols{{4 * H, 4 * H + 1, 4 * H + 2, 4 * H + 3}}, facc[P][H]);
      });
    });
  }
};

// MR rows computed of an LHS block of LhsMR rows (the 4-row code runs on 8-row blocks).
template <int MR, int LhsMR = MR, bool InOrder = false>
struct DotGemm {
  static_assert((MR == 4 || MR == 8) && MR <= LhsMR, "row variants");
  static_assert(!InOrder || (MR == 8 && LhsMR == 8), "the in-order schedule is an 8-row one");
  static constexpr LhsFormat kLhs{LhsMR, 4};
  static constexpr int kPasses = 2, kPanels = 1;

  int32x4_t acc[MR], dacc[MR];
  float32x4_t facc[MR], sc;

  explicit DotGemm(const Lhs&) {
    for (auto& f : facc) f = vdupq_n_f32(0.0f);
  }

  template <int, bool Zeros, bool Bf16, int Pass>
  inline __attribute__((always_inline)) void begin_block(const Block<1>& blk) {
    const int16_t* sums = blk.sums[0];
    const int32_t* pairs = blk.pairs;
    const int16x4_t sw = vld1_s16(sums + 4 * Pass), zw = Zeros ? vld1_s16(sums + kNr + 4 * Pass) : sw;
    sc = load_scales4<Bf16>(blk.scales[0], 4 * Pass);
    int16x8_t p[MR / 4];  // lanes 2r, 2r+1: -zx, -Ex of row r
    static_for<MR / 4>([&](auto Q) { p[Q] = vld1q_s16(reinterpret_cast<const int16_t*>(pairs + 4 * Q)); });
    static_for<MR>([&](auto R) {
      acc[R] = vmull_laneq_s16(sw, p[R / 4], 2 * (R % 4));
      if constexpr (Zeros) acc[R] = vmlal_laneq_s16(acc[R], zw, p[R / 4], 2 * (R % 4) + 1);
    });
  }

  template <int Bits, int Pass>
  inline __attribute__((always_inline)) void step(const SignedWeights<Bits> (&w)[1], int t, const int8_t* xp) {
    using W = SignedWeights<Bits>;
    if constexpr (InOrder) {
      typename W::Chunks k = w[0].template load<Pass == 0 ? 0x55u : 0xAAu>(t);
      static_for<Bits>([&](auto C) { if constexpr ((vectors_in_chunk(Bits, C) & (Pass == 0 ? 0x55u : 0xAAu)) != 0) pin(k.c[C]); });
      int8x16_t b[4];
      static_for<4>([&](auto KB) { b[KB] = W::template op<2 * KB + Pass>(k); });
      static_for<4>([&](auto KB) { pin(b[KB]); });
      dot_8x4_step(acc, b, xp);
    } else {
      int8x16_t b[4];
      static_for<4>([&](auto KB) {
        if constexpr (W::spare(2 * KB + Pass)) b[KB] = w[0].template operand<2 * KB + Pass>(t);
      });
      static_for<4>([&](auto KB) {
        if constexpr (!W::spare(2 * KB + Pass)) b[KB] = w[0].template operand<2 * KB + Pass>(t);
        static_for<MR / 4>([&](auto Q) {
          const int8x16_t x = vld1q_s8(xp + (KB * LhsMR + 4 * Q) * 4);
          static_for<4>([&](auto L) { acc[4 * Q + L] = vdotq_laneq_s32(acc[4 * Q + L], b[KB], x, L); });
        });
      });
    }
  }

  template <int Bits, int Pass>
  inline __attribute__((always_inline)) void end_block(int b, int blocks) {
    const float32x4_t s = sc;
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
