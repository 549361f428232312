// The cost model: small pure functions from (kernel, uarch, shape, machine) to an estimate.
//
// A kernel's descriptor gives cycles per weight value for unpacking (once per LHS block) and
// per row (the dot products), plus a per-call cost; memory time comes from the bytes a block
// reads and the bandwidth of the cache level the weights live in. Compute and memory overlap,
// so a block costs max(compute, memory).
#pragma once

#include <cstddef>

#include "cpu/profile.h"
#include "registry/registry.h"

namespace lowbit {

// Sustained read bandwidth of one core, bytes per cycle, by where the data lives.
struct Bandwidth {
  double l2, l3, dram;
};
Bandwidth core_bandwidth(Arch arch);

struct BlockShape {
  size_t rows;        // rows in this LHS block (<= kernel mr)
  size_t cols;        // columns computed (padded to the layout's nr)
  size_t k;
  size_t weight_bytes;  // packed bytes the block reads for these columns
};

// Multiplier from the kernel's uarch affinity table (1 when it names none for `u`).
double uarch_factor(const KernelDesc& kd, Uarch u);

// Cycles of one core for one kernel call on one block.
double compute_cycles(const KernelDesc& kd, Uarch u, const BlockShape& b);

}  // namespace lowbit
