// The baseline activation quantizer: DESIGN §1's per-row int8 quantization
// (format/row_quant.h) vectorised for the ISA every build has.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/row_quant.h"

namespace lowbit {

// quantize_row_scalar's results bit for bit, vectorised for the baseline ISA (SSE2 / Advanced
// SIMD); elsewhere the scalar definition itself.
RowQuant quantize_row(const float* x, size_t k, int8_t* q);

}  // namespace lowbit
