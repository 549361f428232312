// Where the planner's numbers come from: the generic cost table, or a tuning record for this
// CPU (docs/tuning.md). The planner reads one immutable Tuning per plan; which one is active
// can change at run time (lowbit::load_tuning), and plans cached before a change are not
// reused after it (plan_key carries the generation).
//
// Lookup, first match wins: LOWBIT_TUNING=<file> ("none": generic numbers only); the user's
// cache directory, by CPU signature; the built-in records; the generic numbers. A record that
// does not fit (another CPU or version, truncated, corrupt, absurd values) is skipped with a
// LOWBIT_LOG=tuning message, never an error: a record can only change speed, not results.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cpu/profile.h"
#include "format/header.h"
#include "registry/registry.h"
#include "select/kernel_cost.h"
#include "select/tuning_record.h"

namespace lowbit {

// What the memory system does, for the planner: cache sizes, bandwidth per worker, threading.
struct MachineNumbers {
  size_t l2 = 0, l3 = 0;
  // Where data stops hitting L3 at all: above l3 when the CPU reports a larger L3 than was
  // measured (a shared L3 measured while neighbours used part of it), at most twice l3.
  size_t l3_upto = 0;
  const BandwidthTable* measured = nullptr;  // the record's, or nullptr: the generic model
  double task_cycles = 500.0;                // per task handed to the pool
  const std::vector<double>* dispatch = nullptr;  // per parallel call, by workers (record)
  std::string source;                        // where each came from, for explain
};

class Tuning {
 public:
  // Generic numbers only: `table` (the generic table unless a test gives its own).
  explicit Tuning(const CostTable& table = generic_costs(), std::string origin = "generic");
  // A record that was checked against this machine (record_mismatch), over `table`.
  Tuning(std::shared_ptr<const TuningRecord> record, std::string origin,
         const CostTable& table = generic_costs());

  // "generic", "built-in record <name>", "file <path>", "cache <path>".
  const std::string& origin() const { return origin_; }
  const TuningRecord* record() const { return record_.get(); }
  // The record describes machines like `prof` (arch, uarch, and cores unless its scope is
  // "uarch"): only then are its numbers used (a named packing target gets generic ones).
  bool applies_to(const CpuProfile& prof) const;

  struct KernelCostFrom {
    KernelCost cost;
    std::string source;  // the origin, "generic", "derived from <kernel> (…)"
    const BandwidthTable* bandwidth = nullptr;  // as this kernel reads, when measured
  };
  // The cost of `kd` (a kernel of `reg`) on `prof`: the record's entry when it applies and the
  // kernel's identity is unchanged; one the applying record lacks takes a measured variant's
  // (same layout and mr) when it has one; else the table's; a kernel in neither takes a
  // sibling's (same layout and mr, else the same layout's nearest mr, else the same ISA's, else
  // the nearest lower ISA tier's) or, failing all, a conservative default — never an error.
  // Logged once per kernel.
  KernelCostFrom kernel_cost(const Registry& reg, const KernelDesc& kd, const CpuProfile& prof) const;

  struct PrefetchFrom {
    uint32_t bytes;      // UKernelArgs::prefetch_bytes of kd's calls
    std::string source;  // the origin of a measured one, or "registry default"
  };
  // How far ahead `kd` prefetches its weights on `prof`: the record's measured distance when
  // the record applies and the kernel's identity is unchanged, else the registry's. Always 0
  // for a kernel that does not prefetch (KernelDesc::prefetch_bytes 0).
  PrefetchFrom prefetch_distance(const Registry& reg, const KernelDesc& kd, const CpuProfile& prof) const;

  MachineNumbers machine(const CpuProfile& prof) const;

  // The record's plan override for these weights, m and threads: only when the record applies
  // and its overrides are current for `prof` (below).
  const PlanOverride* find_override(const Registry& reg, const CpuProfile& prof, const PackedHeader& h,
                                    int m, int threads) const;

  // Overrides were measured against a candidate set: current when the registry fingerprint is
  // `reg`'s, or the record measured every kernel `prof` can run as it is now.
  bool overrides_current(const Registry& reg, const CpuProfile& prof) const;

  // Logs (once per Tuning and message) under LOWBIT_LOG=tuning|select.
  void log_once(const std::string& line) const;

 private:
  const KernelCostFrom* own_cost(const Registry& reg, const KernelDesc& kd, const CpuProfile& prof,
                                 KernelCostFrom* scratch) const;
  // A kernel of kd's layout and mr that the record measured (its identity current), or nullptr.
  const KernelDesc* measured_variant(const Registry& reg, const KernelDesc& kd) const;

  std::shared_ptr<const TuningRecord> record_;
  const CostTable* table_;
  std::string origin_;
  mutable std::mutex logged_mutex_;
  mutable std::set<std::string> logged_;
};

// The Tuning plans use when none is given: found by the lookup above on first use.
std::shared_ptr<const Tuning> active_tuning();
// Makes `t` the active tuning (safe while other threads plan) and returns the previous one.
std::shared_ptr<const Tuning> set_active_tuning(std::shared_ptr<const Tuning> t);
// Incremented by every set_active_tuning: plan keys include it, so a plan cached under one
// tuning is never found under the next.
uint32_t tuning_generation();

// The lookup above, run now (LOWBIT_TUNING, cache directory, built-in records, generic).
std::shared_ptr<const Tuning> lookup_tuning();

// A record file checked against this machine, as a Tuning; throws Error(io_error) when it
// cannot be read, Error(corrupt_data) when it is not a valid record, Error(unsupported) when it
// is for another CPU or lowbit version (messages without the path: the caller names it).
std::shared_ptr<const Tuning> tuning_from_file(const std::string& path, const std::string& origin);

// The records compiled into the library (select/records/*.json).
struct BuiltinRecord {
  const char* file;
  std::string_view text;
};
const std::vector<BuiltinRecord>& builtin_records();
// The built-in record made for this machine, as a Tuning (nullptr: none is): one made on this
// exact CPU (scope "cpu") before one for its micro-architecture, else the first in file order.
std::shared_ptr<const Tuning> builtin_tuning(const std::vector<BuiltinRecord>& records = builtin_records());

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
