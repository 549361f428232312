// Dynamic per-row int8 activation quantization, exactly as DESIGN §1 specifies:
//   lo = min(0, min x), hi = max(0, max x), s = (hi-lo)/255 (s = 1 when that is 0),
//   zp = clamp(round(-128 - lo/s), -128, 127), q = clamp(round(x/s) + zp, -128, 127),
// all in f32, round-half-to-even. A row holding NaN or ±Inf gets s = NaN, zp = 0, q = 0,
// which makes every output of the row NaN and touches nothing else.
//
// Here, below the kernels and the ops, because both quantize rows: the ISA quantizers beside
// the kernels (which are leaves of a call and include nothing from ops) and the baseline one
// in ops/quantize_activations.h.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lowbit {

// One quantized row's scale and zero point.
struct RowQuant {
  float scale;
  int32_t zero;
};

// A row quantizer: quantize_row_scalar's results bit for bit. The wider ones live with their
// ISA's kernels, which name theirs in the registry (KernelDesc::quantize).
using RowQuantizeFn = RowQuant (*)(const float* x, size_t k, int8_t* q);

// The scalar definition: the oracle for every quantizer.
RowQuant quantize_row_scalar(const float* x, size_t k, int8_t* q);

// The scalar pieces every vectorised quantizer shares with the definition, so none diverges.
// The end of a vector range pass over x[0, from): its lanes' minima and maxima (finite: the
// pass checked), then x[from, k) the scalar way, then the row's scale and zero point into *r.
// False when a value of x[from, k) is not finite.
bool finish_range(const float* lo_lanes, const float* hi_lanes, size_t lanes, const float* x,
                  size_t from, size_t k, RowQuant* r);
// The result for a row holding NaN or ±Inf (zeroes q[0, k)).
RowQuant nonfinite_row(size_t k, int8_t* q);
// q[from, k) of a row quantized with r.
void quantize_tail(const float* x, size_t from, size_t k, RowQuant r, int8_t* q);

}  // namespace lowbit
