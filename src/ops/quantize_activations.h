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

// Same results bit for bit, vectorised for the baseline ISA (SSE2 / Advanced SIMD).
RowQuant quantize_row(const float* x, size_t k, int8_t* q);

}  // namespace lowbit
