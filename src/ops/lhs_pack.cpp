#include "ops/lhs_pack.h"

#include <cstring>
#include <vector>

#include "format/layout.h"
#include "ops/quantize_activations.h"

namespace lowbit {

namespace {
size_t align64(size_t v) { return (v + 63) / 64 * 64; }
}  // namespace

LhsBlockLayout lhs_block_layout(LhsFormat f, size_t k, size_t groups) {
  LhsBlockLayout l;
  l.zero_offset = align64(size_t(f.mr) * 4);
  l.sums_offset = l.zero_offset + align64(size_t(f.mr) * 4);
  l.pairs_offset = l.sums_offset + align64(groups * f.mr * 4);
  const size_t blocks = groups == 0 ? 0 : k / size_t(col_sum_block(int(k / groups)));
  l.q_offset = l.pairs_offset + align64(blocks * f.mr * 4);
  l.block_bytes = l.q_offset + align64(size_t(f.mr) * k);
  return l;
}

void pack_lhs(LhsFormat f, size_t m, size_t k, size_t group_size, const float* x, size_t ldx,
              uint8_t* out) {
  const size_t groups = k / group_size;
  const size_t sum_block = size_t(col_sum_block(int(group_size)));
  const LhsBlockLayout l = lhs_block_layout(f, k, groups);
  thread_local std::vector<int8_t> row;
  if (f.mr > 1 && row.size() < k) row.resize(k);
  for (size_t b0 = 0; b0 < m; b0 += f.mr) {
    uint8_t* block = out + (b0 / f.mr) * l.block_bytes;
    std::memset(block, 0, l.block_bytes);
    auto* scales = reinterpret_cast<float*>(block);
    auto* zeros = reinterpret_cast<int32_t*>(block + l.zero_offset);
    auto* sums = reinterpret_cast<int32_t*>(block + l.sums_offset);
    auto* pairs = reinterpret_cast<int32_t*>(block + l.pairs_offset);
    auto* q = reinterpret_cast<int8_t*>(block + l.q_offset);
    for (size_t r = 0; r < size_t(f.mr) && b0 + r < m; ++r) {
      // With one row per block the interleave is the identity: quantize in place.
      int8_t* qr = f.mr == 1 ? q : row.data();
      const RowQuant rq = quantize_row(x + (b0 + r) * ldx, k, qr);
      scales[r] = rq.scale;
      zeros[r] = rq.zero;
      for (size_t g = 0; g < groups; ++g) {
        int32_t s = 0;
        for (size_t i = g * group_size; i < (g + 1) * group_size; ++i) s += qr[i];
        sums[g * f.mr + r] = s;
      }
      for (size_t b = 0; b < k / sum_block; ++b) {
        int32_t sx = 0;
        for (size_t i = b * sum_block; i < (b + 1) * sum_block; ++i) sx += qr[i];
        const int32_t ex = sx - int32_t(sum_block) * rq.zero;
        pairs[b * f.mr + r] = int32_t(uint32_t(uint16_t(-rq.zero)) | uint32_t(uint16_t(-ex)) << 16);
      }
      if (f.mr > 1)
        for (size_t kb = 0; kb < k / f.kr; ++kb)
          std::memcpy(q + (kb * f.mr + r) * f.kr, qr + kb * f.kr, f.kr);
    }
  }
}

}  // namespace lowbit
