// What every aarch64 micro-kernel shares: compile-time loops, the packed LHS block, the
// per-group scales, and the exact final step (fma with s_x and the bias, then the clamp).
//
// All Arm layouts have nr = 8 and sr = 16, so every plane of every record is cut in 16-byte
// chunks (C = gcd(16, gs·w) = 16): a chunk is one 128-bit load, whatever the kr.
//
// Everything here has internal linkage: each ISA translation unit (built with its own -march)
// gets its own copy, so the linker can never hand an i8mm-compiled body to a NEON caller.
// This header is included only from src/kernels/arm; nothing else may include arm_neon.h.
#pragma once

#include <arm_neon.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "registry/kernel.h"

namespace lowbit {
namespace arm {
namespace {

constexpr int kNr = 8;  // columns per panel, every Arm layout

// static_for<N>(f): f(integral_constant<int, 0>) ... f(integral_constant<int, N-1>), so lane
// and shift arguments of the intrinsics are compile-time constants.
template <class F, int... I>
inline __attribute__((always_inline)) void static_for_impl(F&& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
inline __attribute__((always_inline)) void static_for(F&& f) {
  static_for_impl(f, std::make_integer_sequence<int, N>{});
}

// with_bits(bits, f): f(integral_constant<int, bits>) for a weight width 1..8, so every width
// gets its own instantiation of a kernel's loop.
template <class F>
inline __attribute__((always_inline)) void with_bits(int bits, F&& f) {
  static_for<8>([&](auto i) {
    if (bits == i + 1) f(std::integral_constant<int, i + 1>{});
  });
}

// Per-group scales of the record's 8 columns, f32 or bf16 (bf16 << 16 is exact).
inline void load_scales(const PackedGeometry& g, const uint8_t* rec, float32x4_t s[2]) {
  const uint8_t* p = rec + g.scales_offset;
  if (g.scale_format == ScaleFormat::bf16) {
    const uint16x8_t h = vreinterpretq_u16_u8(vld1q_u8(p));
    s[0] = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(h), 16));
    s[1] = vreinterpretq_f32_u32(vshll_high_n_u16(h, 16));
  } else {
    s[0] = vreinterpretq_f32_u8(vld1q_u8(p));
    s[1] = vreinterpretq_f32_u8(vld1q_u8(p + 16));
  }
}

// acc = fma((float) d, s_w, acc), lane by lane: the per-group step of DESIGN §1.
inline float32x4_t scale_acc(float32x4_t acc, int32x4_t d, float32x4_t sw) {
  return vfmaq_f32(acc, vcvtq_f32_s32(d), sw);
}

// The LHS block a kernel reads, and where its parts are.
struct Lhs {
  const float* sx;
  const int32_t* zx;
  const int32_t* pairs;  // [k / sum_block][mr]: -zx | -Ex << 16 (format/lhs_layout.h)
  const int8_t* q;       // [k/kr][mr][kr]
};
inline Lhs lhs_parts(const uint8_t* block, LhsFormat f, const GemmShape& shape) {
  const LhsBlockLayout l = lhs_block_layout(f, size_t(shape.k), size_t(shape.geo->groups));
  return {lhs_scales(block), lhs_zeros(block, l), lhs_pairs(block, l), lhs_q(block, l)};
}

// y = fma(acc, s_x, bias), then finish_output's clamp: `y < lo ? lo : y`, `y > hi ? hi : y`
// as compare-and-select (not vmax/vmin, which order -0 below +0), so NaN rows stay NaN and
// signed zeros come out as in the scalar reference.
inline float32x4_t finish(float32x4_t acc, float32x4_t sx, float32x4_t bias, float32x4_t lo,
                          float32x4_t hi) {
  float32x4_t y = vfmaq_f32(bias, acc, sx);
  y = vbslq_f32(vcltq_f32(y, lo), lo, y);
  return vbslq_f32(vcgtq_f32(y, hi), hi, y);
}

// Output columns of a panel, relative to its first: 4 of them per accumulator vector.
struct Cols {
  int c[4];
};

// Finishes and stores one row's accumulator vector whose lanes are panel columns `cols` of the
// panel starting at `col`; columns past a.n are not written.
inline void store_lanes(const UKernelArgs& a, float sx, int row, size_t col, const Cols& cols,
                        float32x4_t acc) {
  float b[4] = {};
  const bool whole = col + size_t(cols.c[3]) < a.n && cols.c[3] == cols.c[0] + 3;
  for (int i = 0; i < 4; ++i)
    if (a.bias != nullptr && col + size_t(cols.c[i]) < a.n) b[i] = a.bias[col + size_t(cols.c[i])];
  const float32x4_t y = finish(acc, vdupq_n_f32(sx), vld1q_f32(b), vdupq_n_f32(a.clamp_min),
                               vdupq_n_f32(a.clamp_max));
  float* out = a.y + size_t(row) * a.y_stride + col;
  if (whole) {
    vst1q_f32(out + cols.c[0], y);
    return;
  }
  float t[4];
  vst1q_f32(t, y);
  for (int i = 0; i < 4; ++i)
    if (col + size_t(cols.c[i]) < a.n) out[cols.c[i]] = t[i];
}

}  // namespace
}  // namespace arm
}  // namespace lowbit
