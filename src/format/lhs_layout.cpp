#include "format/lhs_layout.h"

#include "format/layout.h"

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
  l.block_bytes = l.q_offset + align64(lhs_values_bytes(f, k));
  return l;
}

}  // namespace lowbit
