#include "select/cost_model.h"

#include <algorithm>

namespace lowbit {

Bandwidth core_bandwidth(Arch arch) {
  // Measured on the development machines (MEASURING.md, x86 at ~3.2 GHz): L2 ~100 GB/s,
  // L3 ~85 GB/s, DRAM ~30 GB/s for one core. Arm: typical Neoverse/Cortex-X figures.
  if (arch == Arch::arm64) return {32.0, 16.0, 6.0};
  return {31.0, 26.0, 9.0};
}

int effective_rows(const KernelDesc& kd, size_t rows, int bits) {
  int r = int(rows);
  while (r < kd.mr && !has_row_variant(kd, r, bits)) ++r;
  return r;
}

CostTerms block_terms(const KernelDesc& kd, const BlockShape& b) {
  const double values = double(b.cols) * double(b.k);
  const double rows = double(effective_rows(kd, b.rows, b.bits));
  const double col_groups = values / double(b.group_size);
  return {values, values * rows, col_groups, col_groups * rows};
}

double narrow_term(const KernelDesc& kd, const BlockShape& b, int wide_cols) {
  if (wide_cols <= 0) return 0.0;
  return double(b.cols % size_t(wide_cols)) * double(b.k) * double(effective_rows(kd, b.rows, b.bits));
}

double panel_read_bytes(const KernelDesc& kd, const PackedGeometry& g) {
  return double(g.panel_footprint()) - (kd.skips_sums ? double(g.panel_sums_bytes()) : 0.0);
}

double narrow_cycles(const KernelDesc& kd, const KernelCost& c, Uarch u, const BlockShape& b) {
  if (c.narrow == 0.0f) return 0.0;
  return narrow_term(kd, b, c.wide_cols) * c.narrow * uarch_factor(c, u);
}

double compute_cycles(const KernelDesc& kd, const KernelCost& c, Uarch u, const BlockShape& b) {
  const double values = double(b.cols) * double(b.k);
  const double rows = double(effective_rows(kd, b.rows, b.bits));
  const double col_groups = values / double(b.group_size);
  const int bits = std::clamp(b.bits, 1, kMaxBits);
  const double v = values * (c.unpack[bits] + c.dot[bits] * rows) +
                   col_groups * (c.group + c.group_row * rows);
  return v * uarch_factor(c, u);
}

double call_cycles(const KernelCost& c, Uarch u, size_t lhs_block_bytes) {
  constexpr double kL2BytesPerCycle = 16.0;
  return (c.call + double(lhs_block_bytes) / kL2BytesPerCycle) * uarch_factor(c, u);
}

}  // namespace lowbit
