// The cost model: small pure functions from (kernel, its cost, uarch, shape, machine) to an
// estimate.
//
// A kernel's cost (select/kernel_cost.h) gives cycles per weight value for unpacking (once per
// LHS block) and per row (the dot products), per column and group, plus a per-call cost;
// memory time comes from the bytes a task reads and the bandwidth of the cache level the
// weights live in (select/plan.cpp combines them per task and schedules the tasks on the
// workers).
#pragma once

#include <cstddef>

#include "cpu/profile.h"
#include "registry/registry.h"
#include "select/kernel_cost.h"

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
  int bits;           // weight bit width
};

// Rows a block of `rows` rows of `bits`-bit weights really computes: the kernel's next row
// variant at that width.
int effective_rows(const KernelDesc& kd, size_t rows, int bits);

// How many of each cost unit one kernel call on one block pays: the coefficients of
// KernelCost apply to these (compute_cycles is their weighted sum), which is what a
// least-squares fit of measured times needs.
struct CostTerms {
  double unpack;     // weight values (once per block)
  double dot;        // weight values × rows
  double group;      // column-groups
  double group_row;  // column-groups × rows
};
CostTerms block_terms(const KernelDesc& kd, const BlockShape& b);

// Weight values × rows of one call over b.cols columns that fall past its last whole group of
// `wide_cols` columns (what KernelCost::narrow is paid on).
double narrow_term(const KernelDesc& kd, const BlockShape& b, int wide_cols);

// Cycles of one core for one kernel call on one block, without the per-call cost and the
// narrow columns (narrow_cycles).
double compute_cycles(const KernelDesc& kd, const KernelCost& c, Uarch u, const BlockShape& b);

// Bytes of one panel that `kd` reads: all of it, or the records only when it skips the column
// sums.
double panel_read_bytes(const KernelDesc& kd, const PackedGeometry& g);

// Extra cycles of one call over b.cols columns for its columns past the last whole group.
double narrow_cycles(const KernelDesc& kd, const KernelCost& c, Uarch u, const BlockShape& b);

// Cycles of one core per kernel call: the kernel's setup, and reading its LHS block again
// from L2 (a narrow column tile pays it once per few columns).
double call_cycles(const KernelCost& c, Uarch u, size_t lhs_block_bytes);

}  // namespace lowbit
