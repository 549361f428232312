// The packed activations' (LHS) block format: what the ops write and the kernels read. Rows
// quantized once per call, in blocks of `mr` rows laid out for a kernel's tile. One block:
//   float   scale[mr]            s_x (NaN for a row holding NaN/Inf)
//   int32   zero[mr]             zx
//   int32   sums[groups][mr]     Σ_{k∈g} qx, for kernels that fold zero points in with sums
//   int32   pairs[k/b][mr]       per sum block of b = col_sum_block(group_size) k values (see
//                                format/layout.h): -zx | -Ex << 16 as two int16, with
//                                Ex = Σ_{k∈block} qx - b·zx. Against a column-sum lane
//                                Su | cz << 16, one 16-bit pair dot product gives
//                                -zx·Su - cz·Ex (|Ex| <= 255·128 fits)
//   int8    q[k/kr][mr][kr]      qx, kr values of a row at a time; rows >= m are zero
//   or, for table-lookup kernels (LhsKind::lut4), instead of q:
//   uint8   tables[k/4][mr][32]  per row and k4 group j, with x' = qx - zx (|x'| <= 255) and
//                                T'[i] = Σ_{b<4} bit b of i · x'[4j+b] + kLutBias (0..2040):
//                                16 bytes T' & 31, then 16 bytes T' >> 5 (vpshufb tables whose
//                                byte sums stay exact for 4 lookups); rows >= m: zero
// Each part starts at a 64-byte boundary of the block; blocks are 64-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lowbit {

// What a block holds after the pairs: the values (q) or the lookup tables (tables).
enum class LhsKind : uint8_t { values, lut4 };

struct LhsFormat {
  int mr = 1;
  int kr = 1;
  LhsKind kind = LhsKind::values;
  bool operator==(const LhsFormat& o) const { return mr == o.mr && kr == o.kr && kind == o.kind; }
};

// The lookup tables' entries are offset by this (4 · 255), so that they are never negative.
constexpr int kLutBias = 1020;
constexpr int kLutTableBytes = 32;  // per row and k4 group
// Bytes of one block's values (q) or lookup tables (8 per k and row): what a kernel streams of
// its LHS in a call.
constexpr size_t lhs_values_bytes(LhsFormat f, size_t k) {
  return size_t(f.mr) * k * (f.kind == LhsKind::lut4 ? size_t(kLutTableBytes) / 4 : 1);
}

struct LhsBlockLayout {
  size_t zero_offset, sums_offset, pairs_offset, q_offset, block_bytes;  // q_offset: q or tables
};

LhsBlockLayout lhs_block_layout(LhsFormat f, size_t k, size_t groups);

// Writes one row's lookup tables (lut4, above) from its quantized values q[k] and zero point
// zx, into out + j·mr·kLutTableBytes for each k4 group j (out: the row's first slot): the
// baseline's (ops/lhs_pack.h, lut_tables) and each ISA's own (KernelDesc::tables), the same bytes.
using LutTablesFn = void (*)(const int8_t* q, size_t k, int32_t zx, size_t mr, uint8_t* out);

// Block accessors.
inline const float* lhs_scales(const uint8_t* block) { return reinterpret_cast<const float*>(block); }
inline const int32_t* lhs_zeros(const uint8_t* block, const LhsBlockLayout& l) {
  return reinterpret_cast<const int32_t*>(block + l.zero_offset);
}
inline const int32_t* lhs_sums(const uint8_t* block, const LhsBlockLayout& l) {
  return reinterpret_cast<const int32_t*>(block + l.sums_offset);
}
inline const int32_t* lhs_pairs(const uint8_t* block, const LhsBlockLayout& l) {
  return reinterpret_cast<const int32_t*>(block + l.pairs_offset);
}
inline const int8_t* lhs_q(const uint8_t* block, const LhsBlockLayout& l) {
  return reinterpret_cast<const int8_t*>(block + l.q_offset);
}
inline const uint8_t* lhs_tables(const uint8_t* block, const LhsBlockLayout& l) { return block + l.q_offset; }

}  // namespace lowbit
