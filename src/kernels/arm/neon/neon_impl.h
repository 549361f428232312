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

// The layout's planes hold u = q + 2^(Bits-1) in 0..2^Bits-1, low bits first
// (plane_count / plane_width / plane_shift: format/layout.h).
// Vectors produced per block: a 16-byte chunk of the narrowest plane holds 8/w of them.
constexpr int block_vectors(int bits) { return 8 / plane_width(bits, plane_count(bits) - 1); }

template <int W, int S>
inline __attribute__((always_inline)) uint8x16_t plane_field(uint8x16_t p) {
  if constexpr (W == 8) {
    return p;
  } else if constexpr (S == 0) {
    return vandq_u8(p, vdupq_n_u8((1 << W) - 1));
  } else if constexpr ((S + 1) * W == 8) {
    return vshrq_n_u8(p, S * W);
  } else {
    return vandq_u8(vshrq_n_u8(p, S * W), vdupq_n_u8((1 << W) - 1));
  }
}

// The weight stream of one record, u, kBlock vectors at a time.
template <int Bits>
struct Unpack {
  static constexpr int kPlanes = plane_count(Bits);
  static constexpr int kBlock = block_vectors(Bits);
  const uint8_t* plane[kPlanes];

  Unpack(const PackedGeometry& g, const uint8_t* rec) {
    for (int i = 0; i < kPlanes; ++i) plane[i] = rec + g.planes[i].offset;
  }

  // Vectors [b·kBlock, (b+1)·kBlock) of the stream.
  inline __attribute__((always_inline)) void block(int b, uint8x16_t* out) const {
    static_for<kPlanes>([&](auto I) {
      constexpr int w = plane_width(Bits, I), f = 8 / w, shift = plane_shift(Bits, I);
      static_for<kBlock / f>([&](auto C) {
        const uint8x16_t p = vld1q_u8(plane[I] + (size_t(b) * (kBlock / f) + C) * 16);
        static_for<f>([&](auto S) {
          const uint8x16_t v = plane_field<w, S>(p);
          uint8x16_t& o = out[C * f + S];
          if constexpr (I == 0) {
            o = v;
          } else {
            o = vsliq_n_u8(o, v, shift);  // o holds bits [0, shift) so far
          }
        });
      });
    });
  }
};

// Per-group zero points of the 8 columns (0 without zeros), as int8.
inline int8x8_t load_zeros(const PackedGeometry& g, const uint8_t* rec) {
  return g.has_zeros ? vld1_s8(reinterpret_cast<const int8_t*>(rec + g.zeros_offset)) : vdup_n_s8(0);
}

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

  // Rows [0, min(MR, a.m)) of the panel at column `col`: columns 0-3 and 4-7 of each row.
  void store(const UKernelArgs& a, const Lhs& l, size_t col) {
    static_for<MR>([&](auto R) {
      if (size_t(R) < a.m)
        static_for<2>([&](auto H) { store_lanes(a, l.sx[R], R, col, Cols{{4 * H, 4 * H + 1, 4 * H + 2, 4 * H + 3}}, facc[R][H]); });
    });
  }
};

// Runs one kernel over every group of one column panel. Kern supplies:
//   kStep                  stream vectors consumed per step()
//   begin_group<Bits>(g, rec, grp), step<Bits>(const uint8x16_t* w, int s),
//   end_group<Bits>(g, rec, grp)
// kGroup > 0 fixes the group size at compile time (the llvm-mca harness, bench/arm_mca, uses
// it to get a straight-line group body); the registered kernels read it from the geometry.
template <int Bits, int kGroup, class Kern>
inline __attribute__((always_inline)) void run_panel(Kern& kern, const PackedGeometry& g,
                                                     const uint8_t* panel) {
  using U = Unpack<Bits>;
  constexpr int kU = U::kBlock > Kern::kStep ? U::kBlock : Kern::kStep;
  auto chunk = [&](const U& up, int v) __attribute__((always_inline)) {
    uint8x16_t w[kU];
    static_for<kU / U::kBlock>([&](auto B) { up.block(v / U::kBlock + B, w + B * U::kBlock); });
    static_for<kU / Kern::kStep>([&](auto S) {
      kern.template step<Bits>(w + S * Kern::kStep, v / Kern::kStep + S);
    });
  };
  for (int grp = 0; grp < g.groups; ++grp) {
    const uint8_t* rec = panel + size_t(grp) * g.record_bytes;
    const U up(g, rec);
    kern.template begin_group<Bits>(g, rec, grp);
    if constexpr (kGroup > 0) {
      static_for<kGroup / 2 / kU>([&](auto V) { chunk(up, V * kU); });
    } else {
      const int nv = g.group_size / 2;  // vectors per record: nr·gs/16, a multiple of 8
      for (int v = 0; v < nv; v += kU) chunk(up, v);
    }
    kern.template end_group<Bits>(g, rec, grp);
  }
}

template <class Kern, int Bits, int kGroup = 0>
void run_bits(const GemmShape& shape, const UKernelArgs& a, const Lhs& lhs) {
  const PackedGeometry& g = *shape.geo;
  const size_t panels = (a.n + kNr - 1) / kNr;
  for (size_t p = 0; p < panels; ++p) {
    Kern kern(lhs, g);
    run_panel<Bits, kGroup>(kern, g, a.rhs + p * g.panel_bytes);
    kern.store(a, lhs, p * kNr);
  }
}

// The registered entry point of a kernel: one instantiation per bit width (4 and 8 the fast
// paths with one shift-and-mask or none per vector; the others combine their planes).
template <class Kern>
void run(const GemmShape& shape, const UKernelArgs& a) {
  const Lhs lhs = lhs_parts(a.lhs, Kern::kLhs, shape);
  with_bits(shape.geo->bits, [&](auto bits) { run_bits<Kern, bits>(shape, a, lhs); });
}

}  // namespace
}  // namespace arm
}  // namespace lowbit
