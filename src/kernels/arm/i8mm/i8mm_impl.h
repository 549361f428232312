// Int8 matrix-multiply kernels (armv8.2-a+dotprod+i8mm) on layout arm_i8mm_n8k8s16.
//
// Stream vector v of a record is k-block v/4 (8 k) of columns 2(v%4), 2(v%4)+1: exactly the
// right operand of smmla, which multiplies it with two rows of 8 k into a 2x2 tile
// [r0c0 r0c1 r1c0 r1c1].
//   MR 1: the left operand is (row, ones): one smmla gives the two dot products *and* the two
//         column sums, so the GEMV needs no extra instruction for Sw.
//   MR 4: rows (0,1) and (2,3), plus one smmla with ones per column pair for Sw.
// Zero points are folded in once per group (common.h: d = D - zx·Sw - c·E), in tile layout.
#pragma once

#include "kernels/arm/common.h"

namespace lowbit {
namespace arm {
namespace {

inline int32x4_t dup_pair(int32x4_t v, int i) {  // [v[2i], v[2i+1], v[2i], v[2i+1]]
  return vreinterpretq_s32_s64(i == 0 ? vdupq_laneq_s64(vreinterpretq_s64_s32(v), 0)
                                      : vdupq_laneq_s64(vreinterpretq_s64_s32(v), 1));
}
// Low / high 64-bit halves of two tiles: row 0 / row 1 of two column pairs.
inline int32x4_t tile_rows0(int32x4_t a, int32x4_t b) {
  return vreinterpretq_s32_s64(vuzp1q_s64(vreinterpretq_s64_s32(a), vreinterpretq_s64_s32(b)));
}
inline int32x4_t tile_rows1(int32x4_t a, int32x4_t b) {
  return vreinterpretq_s32_s64(vuzp2q_s64(vreinterpretq_s64_s32(a), vreinterpretq_s64_s32(b)));
}
inline float32x4_t tile_rows(float32x4_t a, float32x4_t b, int row) {
  const int32x4_t ia = vreinterpretq_s32_f32(a), ib = vreinterpretq_s32_f32(b);
  return vreinterpretq_f32_s32(row == 0 ? tile_rows0(ia, ib) : tile_rows1(ia, ib));
}

template <int MR>
struct MmlaKern;

// GEMV: (row, ones) x column pair. Two accumulator sets (even / odd k-blocks) hide latency.
template <>
struct MmlaKern<1> {
  static constexpr LhsFormat kLhs{1, 8};
  static constexpr int kStep = 8;  // two k-blocks: one 16-byte load of the row

  const Lhs& lhs;
  int32x4_t acc[2][4];  // [set][column pair]: dot c, dot c+1, Sw c, Sw c+1
  float32x4_t facc[1][2];
  const int8_t* qx;

  MmlaKern(const Lhs& l, const PackedGeometry&) : lhs(l) {
    facc[0][0] = facc[0][1] = vdupq_n_f32(0.0f);
  }

  template <int Bits>
  void begin_group(const PackedGeometry& g, const uint8_t*, int grp) {
    for (auto& s : acc)
      for (auto& t : s) t = vdupq_n_s32(0);
    qx = lhs.q + size_t(grp) * size_t(g.group_size);
  }

  template <int Bits>
  inline __attribute__((always_inline)) void step(const uint8x16_t* w, int s) {
    const int8x16_t x = vld1q_s8(qx + size_t(s) * 16);
    const int8x8_t ones = vdup_n_s8(1);
    const int8x16_t a[2] = {vcombine_s8(vget_low_s8(x), ones), vcombine_s8(vget_high_s8(x), ones)};
    static_for<2>([&](auto J) {
      static_for<4>([&](auto CP) {
        acc[J][CP] = vmmlaq_s32(acc[J][CP], a[J], dot_operand<Bits>(w[4 * J + CP]));
      });
    });
  }

  template <int Bits>
  void end_group(const PackedGeometry& g, const uint8_t* rec, int grp) {
    float32x4_t s[2];
    load_scales(g, rec, s);
    int32x4_t c[2];
    load_col_offsets(g, rec, col_offset_base<Bits>(), c);
    const int32_t zx = lhs.zx[0], e = lhs.sums[grp] - g.group_size * zx;
    for (int h = 0; h < 2; ++h) {
      const int32x4_t t0 = vaddq_s32(acc[0][2 * h], acc[1][2 * h]);
      const int32x4_t t1 = vaddq_s32(acc[0][2 * h + 1], acc[1][2 * h + 1]);
      const int32x4_t d = vmlsq_n_s32(vmlsq_n_s32(tile_rows0(t0, t1), tile_rows1(t0, t1), zx), c[h], e);
      facc[0][h] = scale_acc(facc[0][h], d, s[h]);
    }
  }

  void store(const UKernelArgs& a, const Lhs& l, size_t col) { store_panel<1>(a, l, col, facc); }
};

// GEMM: 2 row pairs x 4 column pairs of 2x2 tiles.
template <>
struct MmlaKern<4> {
  static constexpr LhsFormat kLhs{4, 8};
  static constexpr int kStep = 4;  // one k-block: 4 column pairs; LHS 4 rows x 8 k

  const Lhs& lhs;
  int32x4_t acc[2][4], sw[4];  // sw: Sw c, Sw c+1, Sw c, Sw c+1
  float32x4_t facc[2][4];      // tile layout
  int32x4_t zx[2];             // zx r, zx r, zx r+1, zx r+1 per row pair
  const int8_t* qx;

  MmlaKern(const Lhs& l, const PackedGeometry&) : lhs(l) {
    for (auto& r : facc)
      for (auto& t : r) t = vdupq_n_f32(0.0f);
    const int32x4_t z = vld1q_s32(l.zx);
    zx[0] = vzip1q_s32(z, z);
    zx[1] = vzip2q_s32(z, z);
  }

  // acc = -c·E in tile layout, Sw = 0.
  template <int Bits>
  void begin_group(const PackedGeometry& g, const uint8_t* rec, int grp) {
    int32x4_t c[2];
    load_col_offsets(g, rec, col_offset_base<Bits>(), c);
    const int32x4_t sums = vld1q_s32(lhs.sums + size_t(grp) * 4), zero = vdupq_n_s32(0);
    const int32x4_t ne[2] = {neg_row_e(vzip1q_s32(sums, sums), zx[0], g.group_size),
                             neg_row_e(vzip2q_s32(sums, sums), zx[1], g.group_size)};
    for (int cp = 0; cp < 4; ++cp) {
      const int32x4_t cc = dup_pair(c[cp / 2], cp % 2);
      for (int rp = 0; rp < 2; ++rp) acc[rp][cp] = vmulq_s32(cc, ne[rp]);
      sw[cp] = zero;
    }
    qx = lhs.q + size_t(grp) * size_t(g.group_size) * 4;
  }

  template <int Bits>
  inline __attribute__((always_inline)) void step(const uint8x16_t* w, int s) {
    const int8x16_t ones = vdupq_n_s8(1);
    const int8x16_t a[2] = {vld1q_s8(qx + size_t(s) * 32), vld1q_s8(qx + size_t(s) * 32 + 16)};
    static_for<4>([&](auto CP) {
      const int8x16_t b = dot_operand<Bits>(w[CP]);
      acc[0][CP] = vmmlaq_s32(acc[0][CP], a[0], b);
      acc[1][CP] = vmmlaq_s32(acc[1][CP], a[1], b);
      sw[CP] = vmmlaq_s32(sw[CP], ones, b);
    });
  }

  template <int Bits>
  void end_group(const PackedGeometry& g, const uint8_t* rec, int) {
    float32x4_t sc[4];
    load_scale_pairs(g, rec, sc);
    for (int cp = 0; cp < 4; ++cp) {
      for (int rp = 0; rp < 2; ++rp)
        facc[rp][cp] = scale_acc(facc[rp][cp], vmlsq_s32(acc[rp][cp], zx[rp], sw[cp]), sc[cp]);
    }
  }

  void store(const UKernelArgs& a, const Lhs& l, size_t col) {
    float32x4_t rows[4][2];
    for (int r = 0; r < 4; ++r)
      for (int h = 0; h < 2; ++h) rows[r][h] = tile_rows(facc[r / 2][2 * h], facc[r / 2][2 * h + 1], r % 2);
    store_panel<4>(a, l, col, rows);
  }
};

}  // namespace
}  // namespace arm
}  // namespace lowbit
