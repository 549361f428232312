#include "select/tuning.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>

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

Tuning::Tuning(const CostTable& table, std::string origin) : table_(&table), origin_(std::move(origin)) {}

Tuning::Tuning(std::shared_ptr<const TuningRecord> record, std::string origin, const CostTable& table)
    : record_(std::move(record)), table_(&table), origin_(std::move(origin)) {}

void Tuning::log_once(const std::string& line) const {
  if (!log_tuning()) return;
  std::lock_guard<std::mutex> lock(logged_mutex_);
  if (logged_.insert(line).second) tuning_log(line);
}

bool Tuning::applies_to(const CpuProfile& prof) const {
  if (record_ == nullptr) return false;
  const CpuSignature& c = record_->cpu;
  return c.arch == prof.arch && c.uarch == prof.main_uarch() &&
         (record_->scope == "uarch" || size_t(c.cores) == prof.num_threads());
}

const Tuning::KernelCostFrom* Tuning::own_cost(const Registry& reg, const KernelDesc& kd,
                                               const CpuProfile& prof, KernelCostFrom* scratch) const {
  if (applies_to(prof)) {
    for (const KernelEntry& e : record_->kernels) {
      if (e.name != kd.name) continue;
      if (e.identity != reg.identity(kd)) {
        log_once(concat(origin_, ": the entry for ", kd.name, " was measured on another kernel (identity ",
                        e.identity, ", now ", reg.identity(kd), "): not used"));
        break;
      }
      *scratch = {e.cost, origin_, e.bandwidth.empty() ? nullptr : &e.bandwidth};
      return scratch;
    }
    // Measured on this CPU, but not this kernel: a measured variant of it is the better guess
    // (kernel_cost); the generic numbers are on another scale (they once let an unmeasured
    // kernel beat every measured one).
    if (measured_variant(reg, kd) != nullptr) return nullptr;
  }
  if (const KernelCost* c = find_cost(*table_, kd.name)) {
    *scratch = {*c, "generic", nullptr};
    return scratch;
  }
  return nullptr;
}

const KernelDesc* Tuning::measured_variant(const Registry& reg, const KernelDesc& kd) const {
  for (const KernelDesc& o : reg.kernels()) {
    if (&o == &kd || o.layout_id != kd.layout_id || o.mr != kd.mr) continue;
    for (const KernelEntry& e : record_->kernels)
      if (e.name == o.name && e.identity == reg.identity(o)) return &o;
  }
  return nullptr;
}

namespace {

int isa_count(IsaSet s) {
  int n = 0;
  for (int i = 0; i < kIsaCount; ++i) n += s.has(Isa(i)) ? 1 : 0;
  return n;
}

}  // namespace

Tuning::KernelCostFrom Tuning::kernel_cost(const Registry& reg, const KernelDesc& kd,
                                           const CpuProfile& prof) const {
  KernelCostFrom own;
  if (own_cost(reg, kd, prof, &own)) return own;
  // No entry: borrow from the closest sibling that has one. Same layout and mr first (another
  // ISA tier of the same tile), then the same layout's nearest mr, then the same ISA's, then
  // the nearest lower ISA tier's (slower per value: a conservative guess for a new tier).
  const KernelDesc* best = nullptr;
  KernelCostFrom best_cost;
  int best_rank = 0;
  for (const KernelDesc& o : reg.kernels()) {
    if (&o == &kd) continue;
    const int d = std::abs(o.mr - kd.mr);
    const int lower = kd.requires.contains(o.requires) ? isa_count(kd.requires.missing_from(o.requires)) : -1;
    const int rank = o.layout_id == kd.layout_id ? d
                     : o.requires == kd.requires ? 1000 + d
                     : lower > 0                 ? 2000 + 100 * lower + d
                                                 : -1;
    if (rank < 0 || (best != nullptr && rank >= best_rank)) continue;
    KernelCostFrom c;
    if (!own_cost(reg, o, prof, &c)) continue;
    best = &o;
    best_cost = c;
    best_rank = rank;
  }
  KernelCostFrom out;
  if (best != nullptr) {
    out = {best_cost.cost, concat("derived from ", best->name, " (", best_cost.source, "; ", kd.name,
                                  " has no cost entry)"), best_cost.bandwidth};
  } else {
    // Nothing alike, not even a lower tier: as slow as the scalar kernel, so a calibrated kernel
    // wins when there is one.
    out = {uniform_cost(8.0f, 2.0f, 50.0f), concat("conservative default (", kd.name, " has no cost entry)"),
           nullptr};
  }
  log_once(out.source);
  return out;
}

Tuning::PrefetchFrom Tuning::prefetch_distance(const Registry& reg, const KernelDesc& kd,
                                               const CpuProfile& prof) const {
  if (kd.prefetch_bytes > 0 && applies_to(prof))
    for (const KernelEntry& e : record_->kernels)
      if (e.name == kd.name && e.identity == reg.identity(kd) && e.prefetch_bytes >= 0)
        return {uint32_t(e.prefetch_bytes), origin_};
  // x86 CPUs have one uarch; a heterogeneous Arm one has no kernel that prefetches.
  const Uarch u = prof.main_uarch();
  const int generic = kd.prefetch_bytes > 0 ? generic_prefetch_bytes(kd.name, u) : -1;
  if (generic >= 0) return {uint32_t(generic), concat("generic for ", uarch_name(u))};
  return {kd.prefetch_bytes, "registry default"};
}

MachineNumbers Tuning::machine(const CpuProfile& prof) const {
  MachineNumbers m;
  m.l2 = prof.caches.l2;
  m.l3 = m.l3_upto = std::max(prof.caches.l3, prof.caches.l2);
  if (!applies_to(prof)) {
    m.source = "caches from the CPU profile, generic bandwidth and threading";
    return m;
  }
  const TuningRecord& r = *record_;
  // A cache size the user set (LOWBIT_L2 / LOWBIT_L3) wins over the measured one.
  auto user_set = [](const char* var) {
    const char* v = std::getenv(var);
    return v != nullptr && *v != '\0';
  };
  std::string l2_from = "from the CPU profile", l3_from = "from the CPU profile";
  if (r.caches.l2 > 0 && !user_set("LOWBIT_L2")) {
    m.l2 = r.caches.l2;
    l2_from = "measured";
  }
  if (r.caches.l3 > 0 && !user_set("LOWBIT_L3")) {
    m.l3 = std::max(r.caches.l3, m.l2);
    m.l3_upto = std::clamp(prof.caches.l3, m.l3, 2 * m.l3);
    l3_from = m.l3_upto > m.l3 ? concat("measured, partly hit up to ", m.l3_upto >> 10, " KiB (the CPU's size)")
                               : "measured";
  }
  const std::string caches = concat("L2 ", l2_from, ", L3 ", l3_from);
  if (!r.bandwidth.empty()) m.measured = &r.bandwidth;
  if (r.task_cycles > 0) m.task_cycles = r.task_cycles;
  if (!r.dispatch_cycles.empty()) m.dispatch = &r.dispatch_cycles;
  m.source = concat(caches, ", bandwidth ", m.measured ? "measured" : "generic", ", threading ",
                    r.task_cycles > 0 ? "measured" : "generic");
  return m;
}

// Overrides rank the kernels the record measured: they hold in the registry they were measured
// with, or while every kernel `prof` can run is one of them, unchanged (a kernel added for an
// ISA the record's CPU lacks leaves them).
bool Tuning::overrides_current(const Registry& reg, const CpuProfile& prof) const {
  if (record_->registry == reg.fingerprint()) return true;
  for (const KernelDesc& kd : reg.kernels()) {
    if (!prof.isa.contains(kd.requires)) continue;
    const auto e = std::find_if(record_->kernels.begin(), record_->kernels.end(),
                                [&](const KernelEntry& k) { return k.name == kd.name; });
    if (e != record_->kernels.end() && e->identity == reg.identity(kd)) continue;
    // Unmeasured, it costs what its measured variant does and never wins over it (registered
    // after it, equal estimates keep the first): the overrides' candidate set is unchanged.
    if (e == record_->kernels.end() && measured_variant(reg, kd) != nullptr &&
        measured_variant(reg, kd) < &kd)
      continue;
    return false;
  }
  return true;
}

const PlanOverride* Tuning::find_override(const Registry& reg, const CpuProfile& prof, const PackedHeader& h,
                                          int m, int threads) const {
  if (!applies_to(prof) || record_->overrides.empty()) return nullptr;
  if (!overrides_current(reg, prof)) {
    log_once(concat(origin_, ": plan overrides not used: measured with kernel registry ", record_->registry,
                    ", this one is ", reg.fingerprint(), ", and not on every kernel this CPU runs"));
    return nullptr;
  }
  const WeightProblem& p = h.problem;
  for (const PlanOverride& o : record_->overrides)
    if (o.m == m && o.threads == threads && o.n == p.n && o.k == p.k && o.bits == p.bits &&
        o.group == p.group_size && o.layout == h.layout->name)
      return &o;
  return nullptr;
}

// ---- the active tuning --------------------------------------------------------------------

namespace {

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(Status::io_error, "cannot open the file");
  std::string text;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, size_t(in.gcount()));
    if (text.size() > (16u << 20)) fail(Status::corrupt_data, "larger than 16 MiB");
  }
  if (in.bad()) fail(Status::io_error, "cannot read the file");
  return text;
}

std::shared_ptr<const Tuning> tuning_from_text(std::string_view text, const std::string& origin) {
  auto r = std::make_shared<TuningRecord>(parse_record(text));
  const std::string why = record_mismatch(*r, host_signature());
  if (!why.empty()) fail(Status::unsupported, why);
  // Say which of its entries this build will not use.
  const Registry& reg = default_registry();
  for (const KernelEntry& e : r->kernels) {
    const KernelDesc* kd = reg.kernel(e.name);
    if (kd == nullptr) tuning_log(concat(origin, ": no kernel ", e.name, " in this build (entry not used)"));
    else if (reg.identity(*kd) != e.identity)
      tuning_log(concat(origin, ": ", e.name, " changed since it was measured (entry not used)"));
  }
  auto t = std::make_shared<Tuning>(std::move(r), origin);
  if (!t->record()->overrides.empty() && !t->overrides_current(reg, host_profile()))
    tuning_log(concat(origin, ": ", t->record()->overrides.size(),
                      " plan overrides not used (measured with another kernel registry, without every kernel this CPU runs)"));
  return t;
}

std::shared_ptr<const Tuning> generic_tuning(const std::string& why) {
  return std::make_shared<Tuning>(generic_costs(), why.empty() ? "generic" : "generic (" + why + ")");
}

std::shared_ptr<const Tuning>& active_slot() {
  static std::shared_ptr<const Tuning> slot = lookup_tuning();
  return slot;
}
std::atomic<uint32_t> g_generation{0};

}  // namespace

std::shared_ptr<const Tuning> tuning_from_file(const std::string& path, const std::string& origin) {
  return tuning_from_text(read_text(path), origin);
}

namespace {

std::shared_ptr<const Tuning> try_record(const std::function<std::shared_ptr<const Tuning>()>& load,
                                         const std::string& what) {
  try {
    return load();
  } catch (const std::exception& e) {
    tuning_log(concat(what, ": ignored: ", e.what()));
    return nullptr;
  }
}

std::shared_ptr<const Tuning> find_record() {
  const char* env = std::getenv("LOWBIT_TUNING");
  const std::string file = env ? env : "";
  if (file == "none" || file == "off" || file == "generic") return generic_tuning("LOWBIT_TUNING=" + file);
  if (!file.empty())
    if (auto t = try_record([&] { return tuning_from_file(file, "file " + file); }, "LOWBIT_TUNING=" + file))
      return t;
  if (const std::string dir = tuning_cache_dir(); !dir.empty()) {
    const std::string path = dir + "/" + record_file_name(host_signature());
    if (!std::ifstream(path)) tuning_log(concat("no record in the cache: ", path));
    else if (auto t = try_record([&] { return tuning_from_file(path, "cache " + path); }, path))
      return t;
  }
  return builtin_tuning();
}

}  // namespace

std::shared_ptr<const Tuning> builtin_tuning(const std::vector<BuiltinRecord>& records) {
  // A record made on this very CPU (`lowbit tune`, scope "cpu") is preferred over one for its
  // whole micro-architecture, whatever the files' order.
  std::shared_ptr<const Tuning> for_uarch;
  for (const BuiltinRecord& b : records) {
    const std::string origin = concat("built-in record ", b.file);
    auto t = try_record([&] { return tuning_from_text(b.text, origin); }, origin);
    if (t == nullptr) continue;
    if (t->record()->scope == "cpu") return t;
    if (for_uarch == nullptr) for_uarch = t;
  }
  return for_uarch;
}

std::shared_ptr<const Tuning> lookup_tuning() {
  std::shared_ptr<const Tuning> t = find_record();
  if (t == nullptr) t = generic_tuning("");
  tuning_log(concat("using ", t->origin()));
  return t;
}

std::shared_ptr<const Tuning> active_tuning() { return std::atomic_load(&active_slot()); }

std::shared_ptr<const Tuning> set_active_tuning(std::shared_ptr<const Tuning> t) {
  if (t == nullptr) t = generic_tuning("");
  auto previous = std::atomic_exchange(&active_slot(), std::move(t));
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  return previous;
}

uint32_t tuning_generation() { return g_generation.load(std::memory_order_acquire); }

void load_tuning(const std::string& path) {
  if (path.empty()) {
    set_active_tuning(lookup_tuning());
    return;
  }
  std::shared_ptr<const Tuning> t;
  try {
    t = tuning_from_file(path, "file " + path);
  } catch (const Error& e) {
    fail(e.status(), "tuning record ", path, ": ", e.what());
  }
  set_active_tuning(std::move(t));
}

}  // namespace lowbit
