// Packing activations (LHS): rows quantized once per call into the blocks of
// format/lhs_layout.h, for a kernel's tile.
#pragma once

#include <cstddef>
#include <cstdint>

#include "format/lhs_layout.h"
#include "ops/quantize_activations.h"

namespace lowbit {

// One row's lookup tables (LhsKind::lut4): the definition (SSE2); an ISA's own
// (KernelDesc::tables) writes the same bytes.
void lut_tables(const int8_t* q, size_t k, int32_t zx, size_t mr, uint8_t* out);

// Quantizes rows [0, m) of x (row stride ldx floats) into ceil(m/mr) blocks at `out`, each
// row with `quantize` (the kernel's, KernelDesc::quantize, when it has one) and, for lut4, its
// tables with `tables` (likewise KernelDesc::tables).
void pack_lhs(LhsFormat f, size_t m, size_t k, size_t group_size, const float* x, size_t ldx,
              uint8_t* out, RowQuantizeFn quantize = quantize_row, LutTablesFn tables = lut_tables);

}  // namespace lowbit
