// Where the planner's numbers come from: the generic cost table, or a tuning record for this
// CPU (docs/tuning.md). The planner reads one immutable Tuning per plan; which one is active
// can change at run time (lowbit::load_tuning), and plans cached before a change are not
// reused after it (plan_key carries the generation).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "cpu/profile.h"
#include "registry/registry.h"
#include "select/kernel_cost.h"

namespace lowbit {

class Tuning {
 public:
  // Generic numbers only: `table` (the generic table unless a test gives its own).
  explicit Tuning(const CostTable& table = generic_costs());

  // "generic", or where the record came from.
  const std::string& origin() const { return origin_; }

  struct KernelCostFrom {
    KernelCost cost;
    std::string source;  // "generic", "record …", "derived from <kernel> (…)"
  };
  // The cost of `kd` on `prof`: from the table by name; a kernel that has no entry takes a
  // sibling's (same layout and mr, else same layout and the nearest mr, else same ISA) or,
  // failing all, a conservative default — never an error. Logged once per kernel.
  KernelCostFrom kernel_cost(const Registry& reg, const KernelDesc& kd) const;

 private:
  const KernelCost* own_cost(const KernelDesc& kd) const;

  const CostTable* table_;
  std::string origin_ = "generic";
  mutable std::mutex logged_mutex_;
  mutable std::set<std::string> logged_;
};

// The Tuning plans use when none is given.
std::shared_ptr<const Tuning> active_tuning();
// Makes `t` the active tuning (safe while other threads plan) and returns the previous one.
std::shared_ptr<const Tuning> set_active_tuning(std::shared_ptr<const Tuning> t);
// Incremented by every set_active_tuning: plan keys include it, so a plan cached under one
// tuning is never found under the next.
uint32_t tuning_generation();

// Makes a tuning active for a scope (tests, `lowbit tune`), then restores the previous one.
class ScopedTuning {
 public:
  explicit ScopedTuning(std::shared_ptr<const Tuning> t) : previous_(set_active_tuning(std::move(t))) {}
  ~ScopedTuning() { set_active_tuning(std::move(previous_)); }
  ScopedTuning(const ScopedTuning&) = delete;
  ScopedTuning& operator=(const ScopedTuning&) = delete;

 private:
  std::shared_ptr<const Tuning> previous_;
};

// True when LOWBIT_LOG names "tuning" or "select"; tuning_log prints one line to stderr.
bool log_tuning();
void tuning_log(const std::string& line);

}  // namespace lowbit
