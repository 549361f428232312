#include "select/cost_model.h"

#include <algorithm>

namespace lowbit {

Bandwidth core_bandwidth(Arch arch) {
  // Measured on the development machines (MEASURING.md, x86 at ~3.2 GHz): L2 ~100 GB/s,
  // L3 ~85 GB/s, DRAM ~30 GB/s for one core. Arm: typical Neoverse/Cortex-X figures.
  if (arch == Arch::arm64) return {32.0, 16.0, 6.0};
  return {31.0, 26.0, 9.0};
}

double uarch_factor(const KernelDesc& kd, Uarch u) {
  for (const UarchFactor& f : kd.prefers) {
    if (f.uarch == Uarch::unknown) break;
    if (f.uarch == u) return f.factor;
  }
  return 1.0;
}

double compute_cycles(const KernelDesc& kd, Uarch u, const BlockShape& b) {
  const double values = double(b.cols) * double(b.k);
  int r = int(b.rows);
  while (r < kd.mr && !(kd.cost.row_variants >> (r - 1) & 1u)) ++r;
  const double rows = double(r);
  const double col_groups = values / double(b.group_size);
  const double c = values * (kd.cost.unpack + kd.cost.dot * rows) +
                   col_groups * (kd.cost.group + kd.cost.group_row * rows);
  return c * uarch_factor(kd, u);
}

double call_cycles(const KernelDesc& kd, Uarch u, size_t lhs_block_bytes) {
  constexpr double kL2BytesPerCycle = 16.0;
  return (kd.cost.call + double(lhs_block_bytes) / kL2BytesPerCycle) * uarch_factor(kd, u);
}

}  // namespace lowbit
