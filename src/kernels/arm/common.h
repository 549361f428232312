// What every aarch64 micro-kernel shares: unpacking a record's bit planes into vectors of the
// weight stream, the per-group scale / zero-point loads, and the exact final step.
//
// All three Arm layouts have nr = 8 and sr = 16, so every plane of every record is cut in
// 16-byte chunks (C = gcd(16, gs·w) = 16) and vector v of a record is stream values
// [16v, 16v+16): one 128-bit load and a shift-and-mask per vector, whatever the kr.
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

// Bit planes of a b-bit record (format/layout.h): widths 8, 4, 2, 1 taken greedily, low bits
// first.
constexpr int plane_count(int bits) { return (bits >> 3 & 1) + (bits >> 2 & 1) + (bits >> 1 & 1) + (bits & 1); }
constexpr int plane_width(int bits, int i) {
  for (int w = 8; w >= 1; w /= 2)
    if (bits & w) {
      if (i == 0) return w;
      --i;
    }
  return 0;
}
constexpr int plane_shift(int bits, int i) {
  int s = 0;
  for (int j = 0; j < i; ++j) s += plane_width(bits, j);
  return s;
}
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

// The weight stream of one record, u = q + 2^(Bits-1) in 0..2^Bits-1, kBlock vectors at a time.
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

// The signed operand the dot-product kernels multiply: u itself below 8 bits (0..127), and
// q = u - 128 (u ^ 0x80) for 8 bits. col_offset() is the matching c with qw - zw = w - c.
template <int Bits>
inline __attribute__((always_inline)) int8x16_t dot_operand(uint8x16_t u) {
  if constexpr (Bits == 8) return vreinterpretq_s8_u8(veorq_u8(u, vdupq_n_u8(0x80)));
  else return vreinterpretq_s8_u8(u);
}
template <int Bits>
constexpr int col_offset_base() { return Bits == 8 ? 0 : 1 << (Bits - 1); }

// Per-group scales of the record's 8 columns, f32 or bf16 (bf16 << 16 is exact).
// pairs: [s(2i), s(2i+1)] twice, the tile layout of the i8mm kernels (ld1r of 64 bits).
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

inline void load_scale_pairs(const PackedGeometry& g, const uint8_t* rec, float32x4_t s[4]) {
  const uint8_t* p = rec + g.scales_offset;
  for (int i = 0; i < 4; ++i) {
    if (g.scale_format == ScaleFormat::bf16) {
      const uint32x2_t h = vld1_dup_u32(reinterpret_cast<const uint32_t*>(p + 4 * i));
      s[i] = vreinterpretq_f32_u32(vshll_n_u16(vreinterpret_u16_u32(h), 16));
    } else {
      s[i] = vreinterpretq_f32_u64(vld1q_dup_u64(reinterpret_cast<const uint64_t*>(p + 8 * i)));
    }
  }
}

// Per-group zero points of the 8 columns (0 without zeros), as int8.
inline int8x8_t load_zeros(const PackedGeometry& g, const uint8_t* rec) {
  return g.has_zeros ? vld1_s8(reinterpret_cast<const int8_t*>(rec + g.zeros_offset)) : vdup_n_s8(0);
}

// c = base + zw per column, int32: qw - zw = w - c for the operand w of dot_operand().
inline void load_col_offsets(const PackedGeometry& g, const uint8_t* rec, int base, int32x4_t c[2]) {
  const int16x8_t z = vaddq_s16(vmovl_s8(load_zeros(g, rec)), vdupq_n_s16(int16_t(base)));
  c[0] = vmovl_s16(vget_low_s16(z));
  c[1] = vmovl_high_s16(z);
}

// With D = Σ qx·w, Sw = Σ w (per column), Sx = Σ qx (per row) over a group of gs values:
//   d = Σ (qx - zx)(w - c) = D - zx·Sw - c·E,   E = Sx - gs·zx (per row)
// exact modulo 2^32, and d fits in int32. c and E are known when a group starts, so the
// kernels start their accumulators at c·(-E) (one mul) and subtract zx·Sw at the end.
inline int32x4_t neg_row_e(int32x4_t sx, int32x4_t zx, int gs) { return vmlaq_n_s32(vnegq_s32(sx), zx, gs); }

// acc = fma((float) d, s_w, acc), lane by lane: the per-group step of DESIGN §1.
inline float32x4_t scale_acc(float32x4_t acc, int32x4_t d, float32x4_t sw) {
  return vfmaq_f32(acc, vcvtq_f32_s32(d), sw);
}

// The LHS block a kernel reads, and where its parts are.
struct Lhs {
  const float* sx;
  const int32_t* zx;
  const int32_t* sums;  // [groups][mr]
  const int8_t* q;      // [k/kr][mr][kr]
};
inline Lhs lhs_parts(const uint8_t* block, LhsFormat f, const GemmShape& shape) {
  const LhsBlockLayout l = lhs_block_layout(f, size_t(shape.k), size_t(shape.geo->groups));
  return {lhs_scales(block), lhs_zeros(block, l), lhs_sums(block, l), lhs_q(block, l)};
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

// Stores rows [0, min(MR, a.m)) of one 8-column panel at column `col`; acc[r] holds row r's
// columns 0-3 and 4-7. Columns past a.n are not written.
template <int MR>
inline void store_panel(const UKernelArgs& a, const Lhs& lhs, size_t col, const float32x4_t (*acc)[2]) {
  const size_t cols = a.n - col < size_t(kNr) ? a.n - col : size_t(kNr);
  float32x4_t bias[2] = {vdupq_n_f32(0.0f), vdupq_n_f32(0.0f)};
  if (a.bias != nullptr) {
    float b[kNr] = {};
    std::memcpy(b, a.bias + col, cols * sizeof(float));
    bias[0] = vld1q_f32(b);
    bias[1] = vld1q_f32(b + 4);
  }
  const float32x4_t lo = vdupq_n_f32(a.clamp_min), hi = vdupq_n_f32(a.clamp_max);
  for (int r = 0; r < MR && size_t(r) < a.m; ++r) {
    const float32x4_t sx = vdupq_n_f32(lhs.sx[r]);
    float* y = a.y + size_t(r) * a.y_stride + col;
    const float32x4_t y0 = finish(acc[r][0], sx, bias[0], lo, hi);
    const float32x4_t y1 = finish(acc[r][1], sx, bias[1], lo, hi);
    if (cols == size_t(kNr)) {
      vst1q_f32(y, y0);
      vst1q_f32(y + 4, y1);
    } else {
      float t[kNr];
      vst1q_f32(t, y0);
      vst1q_f32(t + 4, y1);
      std::memcpy(y, t, cols * sizeof(float));
    }
  }
}

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
  switch (shape.geo->bits) {
    case 1: return run_bits<Kern, 1>(shape, a, lhs);
    case 2: return run_bits<Kern, 2>(shape, a, lhs);
    case 3: return run_bits<Kern, 3>(shape, a, lhs);
    case 4: return run_bits<Kern, 4>(shape, a, lhs);
    case 5: return run_bits<Kern, 5>(shape, a, lhs);
    case 6: return run_bits<Kern, 6>(shape, a, lhs);
    case 7: return run_bits<Kern, 7>(shape, a, lhs);
    default: return run_bits<Kern, 8>(shape, a, lhs);
  }
}

}  // namespace
}  // namespace arm
}  // namespace lowbit
