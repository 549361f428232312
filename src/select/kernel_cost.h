// What a kernel costs, as data looked up by kernel name: the generic table below (hand-fitted
// numbers, used when no tuning record applies) and tuning records (select/tuning.h).
//
// Units: cycles of one core at the model's nominal 3 GHz (1 cycle = 1/3 ns), so records
// measured in nanoseconds and the generic table share one scale.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "cpu/profile.h"

namespace lowbit {

constexpr int kMaxBits = 8;

// Optional uarch affinity: the estimate is multiplied by `factor` on that uarch.
struct UarchFactor {
  Uarch uarch;
  float factor;
};

struct KernelCost {
  // Per weight value, by bit width (index = bits, 1..8): unpacking and column sums, paid once
  // per LHS block; the dot products, paid per row computed.
  float unpack[kMaxBits + 1];
  float dot[kMaxBits + 1];
  float call;       // per call of the kernel (setup, output stores)
  // Per column and group (scales, zero-point terms, int32 -> f32), paid per block and per row
  // on top of the above; zero where the coefficients above were fitted at one group size.
  float group;
  float group_row;
  // A kernel works through `wide_cols` columns at a time (0: no such step); the columns of a
  // call past its last whole group run a narrower loop that costs `narrow` more per weight
  // value and row (e.g. 16- and 32-column calls of a 64-column GEMV, about twice as slow).
  float narrow = 0.0f;
  int wide_cols = 0;
  UarchFactor prefers[4];  // up to 4; {Uarch::unknown, 0} ends a shorter list
};

// The largest coefficients a tuning record may hold: its reader rejects more as corrupt (no
// CPU costs that much), so every fit that writes a record keeps inside them
// (select/fit.h, bounded_for_record).
constexpr double kMaxCyclesPerValue = 1000.0;  // unpack, dot, narrow (the scalar reference: ~10)
constexpr double kMaxCallCycles = 1e7;
constexpr double kMaxGroupCycles = 1e5;  // group, group_row

// A cost with the same unpack / dot for every bit width.
KernelCost uniform_cost(float unpack, float dot, float call, float group = 0.0f,
                        float group_row = 0.0f, std::initializer_list<UarchFactor> prefers = {});

struct NamedCost {
  std::string name;  // kernel name
  KernelCost cost;
};
using CostTable = std::vector<NamedCost>;

// The generic table: one entry per built-in kernel (select/generic_costs.cpp).
const CostTable& generic_costs();

// The entry for `name`, or nullptr.
const KernelCost* find_cost(const CostTable& t, const std::string& name);

// The software-prefetch distance (UKernelArgs::prefetch_bytes) a kernel runs at on a uarch when
// no tuning record gives one, where it was measured far from the registry's default; -1 where
// the default stands (select/generic_costs.cpp).
int generic_prefetch_bytes(const std::string& kernel, Uarch u);

// Multiplier from the cost's uarch affinity table (1 when it names none for `u`).
double uarch_factor(const KernelCost& c, Uarch u);

}  // namespace lowbit
