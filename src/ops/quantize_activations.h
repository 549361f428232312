// Dynamic per-row int8 activation quantization, exactly as DESIGN §1 specifies:
//   lo = min(0, min x), hi = max(0, max x), s = (hi-lo)/255 (s = 1 when that is 0),
//   zp = clamp(round(-128 - lo/s), -128, 127), q = clamp(round(x/s) + zp, -128, 127),
// all in f32, round-half-to-even. A row holding NaN or ±Inf gets s = NaN, zp = 0, q = 0,
// which makes every output of the row NaN and touches nothing else.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lowbit {

struct RowQuant {
  float scale;
  int32_t zero;
};

// The scalar definition: the oracle for quantize_row.
RowQuant quantize_row_scalar(const float* x, size_t k, int8_t* q);

// Same results bit for bit, vectorised for the baseline ISA (SSE2 / Advanced SIMD);
// elsewhere the scalar definition itself.
RowQuant quantize_row(const float* x, size_t k, int8_t* q);

// A row quantizer: quantize_row's contract. Wider ones live with their ISA's kernels, which
// name theirs in the registry (KernelDesc::quantize).
using RowQuantizeFn = RowQuant (*)(const float* x, size_t k, int8_t* q);

// The scalar pieces every vectorised quantizer shares with the definition, so none diverges.
// Scale and zero point from a row's range [lo, hi] (lo <= 0 <= hi).
RowQuant row_params(float lo, float hi);
// The result for a row holding NaN or ±Inf (zeroes q[0, k)).
RowQuant nonfinite_row(size_t k, int8_t* q);
// Widens [*lo, *hi] by x[from, k); false when one of them is not finite.
bool range_tail(const float* x, size_t from, size_t k, float* lo, float* hi);
// q[from, k) of a row quantized with r.
void quantize_tail(const float* x, size_t from, size_t k, RowQuant r, int8_t* q);

}  // namespace lowbit
