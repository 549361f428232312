// The micro-kernel contract. Every kernel, whatever its ISA, computes for each output
//   d_g = Σ_{k∈g} (qx - zx)(qw - zw)  (exact int32)
//   acc = fma((float)d_g, s_w[g], acc) for g = 0..G-1 in order, from acc = 0
//   y   = fma(acc, s_x, bias) ; y = min(max(y, clamp_min), clamp_max)
// so its results are bit-identical to the scalar reference (DESIGN §1).
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/layout.h"
#include "format/lhs_layout.h"

namespace lowbit {

// The farthest a kernel may prefetch ahead (UKernelArgs::prefetch_bytes): far beyond any
// distance that pays (64 KiB per stream would crowd out L2), and the bound on values read
// from tuning records.
constexpr uint32_t kMaxPrefetchBytes = 64 * 1024;

// Constant per packed weights: what a kernel needs to walk the payload.
struct GemmShape {
  const PackedGeometry* geo;  // layout geometry of the packed weights
  int k;
};

struct UKernelArgs {
  size_t m;                 // valid rows in the LHS block, 1..mr
  size_t n;                 // columns to compute, starting at a panel boundary
  const uint8_t* lhs;       // one LHS block (format/lhs_layout.h) of the kernel's LhsFormat
  const uint8_t* rhs;       // packed payload at the first panel
  const uint8_t* sums;      // the first panel's column sums (layouts with them), else nullptr
  const float* bias;        // bias of the first column, or nullptr
  float* y;                 // output of row 0, column 0
  size_t y_stride;          // floats between output rows
  float clamp_min, clamp_max;  // -inf / +inf when the call has no clamp
  // How far ahead a kernel that prefetches its weight streams in software does so, in bytes
  // (0: it does not). Only kernels registered with KernelDesc::prefetches_ahead read it; the
  // distance that suits one CPU's memory does not suit another's, so a tuning record may
  // carry a measured one (select/plan.h, Segment).
  uint32_t prefetch_bytes;
};

using UKernelFn = void (*)(const GemmShape& shape, const UKernelArgs& args);

// The final two steps, shared by every kernel's scalar tail: the clamp keeps NaN (a
// non-finite input row) because NaN compares false.
inline float finish_output(float acc, float sx, float bias, float lo, float hi) {
  float y = __builtin_fmaf(acc, sx, bias);
  y = y < lo ? lo : y;
  y = y > hi ? hi : y;
  return y;
}

}  // namespace lowbit
