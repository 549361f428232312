// The cost model: small pure functions from (kernel, uarch, shape, machine) to an estimate.
//
// A kernel's descriptor gives cycles per weight value for unpacking (once per LHS block) and
// per row (the dot products), per column and group, plus a per-call cost; memory time comes
// from the bytes a task reads and the bandwidth of the cache level the weights live in
// (select/plan.cpp combines them per task and schedules the tasks on the workers).
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
  size_t group_size;
};

// Multiplier from the kernel's uarch affinity table (1 when it names none for `u`).
double uarch_factor(const KernelDesc& kd, Uarch u);

// Cycles of one core for one kernel call on one block, without the per-call cost.
double compute_cycles(const KernelDesc& kd, Uarch u, const BlockShape& b);

// Cycles of one core per kernel call: the kernel's setup, and reading its LHS block again
// from L2 (a narrow column tile pays it once per few columns).
double call_cycles(const KernelDesc& kd, Uarch u, size_t lhs_block_bytes);

}  // namespace lowbit
