#include "select/tuning.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/error.h"

namespace lowbit {

bool log_tuning() {
  static const bool on = [] {
    const char* v = std::getenv("LOWBIT_LOG");
    return v != nullptr && (std::strstr(v, "tuning") != nullptr || std::strstr(v, "select") != nullptr);
  }();
  return on;
}

void tuning_log(const std::string& line) {
  if (log_tuning()) std::fprintf(stderr, "lowbit tuning: %s\n", line.c_str());
}

Tuning::Tuning(const CostTable& table) : table_(&table) {}

const KernelCost* Tuning::own_cost(const KernelDesc& kd) const { return find_cost(*table_, kd.name); }

Tuning::KernelCostFrom Tuning::kernel_cost(const Registry& reg, const KernelDesc& kd) const {
  if (const KernelCost* c = own_cost(kd)) return {*c, origin_};
  // No entry: borrow from the closest sibling that has one. Same layout and mr first (another
  // ISA tier of the same tile), then the same layout's nearest mr, then the same ISA's.
  const KernelDesc* best = nullptr;
  const KernelCost* best_cost = nullptr;
  int best_rank = 0;
  for (const KernelDesc& o : reg.kernels()) {
    const KernelCost* c = &o == &kd ? nullptr : own_cost(o);
    if (c == nullptr) continue;
    const int d = std::abs(o.mr - kd.mr);
    const int rank = o.layout_id == kd.layout_id ? d : o.requires == kd.requires ? 1000 + d : -1;
    if (rank < 0 || (best != nullptr && rank >= best_rank)) continue;
    best = &o;
    best_cost = c;
    best_rank = rank;
  }
  KernelCostFrom out;
  if (best != nullptr) {
    out = {*best_cost, concat("derived from ", best->name, " (", kd.name, " has no cost entry)")};
  } else {
    // Nothing alike: as slow as the scalar kernel, so a calibrated kernel wins when there is one.
    out = {uniform_cost(8.0f, 2.0f, 50.0f), concat("conservative default (", kd.name, " has no cost entry)")};
  }
  {
    std::lock_guard<std::mutex> lock(logged_mutex_);
    if (logged_.insert(kd.name).second) tuning_log(out.source);
  }
  return out;
}

namespace {

// The active tuning: read with std::atomic_load on every plan (a miss of the plan cache),
// replaced with std::atomic_exchange.
std::shared_ptr<const Tuning>& active_slot() {
  static std::shared_ptr<const Tuning> slot = std::make_shared<Tuning>();
  return slot;
}
std::atomic<uint32_t> g_generation{0};

}  // namespace

std::shared_ptr<const Tuning> active_tuning() { return std::atomic_load(&active_slot()); }

std::shared_ptr<const Tuning> set_active_tuning(std::shared_ptr<const Tuning> t) {
  if (t == nullptr) t = std::make_shared<Tuning>();
  auto previous = std::atomic_exchange(&active_slot(), std::move(t));
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  return previous;
}

uint32_t tuning_generation() { return g_generation.load(std::memory_order_acquire); }

}  // namespace lowbit
