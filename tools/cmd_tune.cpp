// `lowbit tune`: measures this machine and writes a tuning record (docs/tuning.md): every
// runnable kernel's cost terms fitted to timed calls, cache sizes where read bandwidth steps
// down, bandwidth per level and per kernel at 1..T threads, the thread pool's costs, and with
// --shapes the measured winners of the planner's top candidates as plan overrides.
#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "args.h"
#include "commands.h"
#include "describe.h"
#include "models.h"
#include "ops/thread_pool.h"
#include "select/plan.h"
#include "select/tuning.h"
#include "timing.h"
#include "tune_measure.h"
#include "util/error.h"

namespace lowbit::cli {

namespace {

std::vector<std::pair<int, int>> parse_shapes(const std::string& spec) {
  std::vector<std::pair<int, int>> out;
  for (const Model& m : models())
    if (m.name == spec) {
      for (const Layer& l : m.layers)
        if (std::find(out.begin(), out.end(), std::pair{l.n, l.k}) == out.end()) out.push_back({l.n, l.k});
      return out;
    }
  size_t start = 0;
  while (start <= spec.size()) {
    const size_t end = std::min(spec.find(',', start), spec.size());
    const std::string item = spec.substr(start, end - start);
    const size_t colon = item.find(':');
    char* e1 = nullptr;
    char* e2 = nullptr;
    const long n = colon == std::string::npos ? 0 : std::strtol(item.c_str(), &e1, 10);
    const long k = colon == std::string::npos ? 0 : std::strtol(item.c_str() + colon + 1, &e2, 10);
    if (colon == std::string::npos || e1 != item.c_str() + colon || *e2 != '\0' || n < 1 || n > (1 << 20) ||
        k < 16 || k > (1 << 20))
      throw UsageError("--shapes: expected llama3-8b, llama3.2-1b, qwen2.5-0.5b or N:K,N:K,... (got '" + item + "')");
    out.push_back({int(n), int(k)});
    start = end + 1;
  }
  return out;
}

// A kernel call measured this much (relative) above its kernel's fit is timed again.
constexpr double kRetimeAbove = 0.10;
// A prefetch distance replaces the registry's when its median is this much (relative) faster.
constexpr double kPrefetchMargin = 0.02;

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

std::string table_text(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += (s.empty() ? "" : " / ") + fmt(x, 1);
  return s.empty() ? "-" : s;
}

}  // namespace

int cmd_tune(int argc, char** argv) {
  const Args args(argc, argv, {"quick", "json", "smoke"},
                  {"threads", "shapes", "out", "bits", "group", "name", "from-measurements"});
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  if (args.has("from-measurements")) return tune_from_measurements(args.str("from-measurements"), args.str("out"));
  const double t_start = now_ns();
  const CpuProfile& prof = host_profile();
  const int threads = int(args.integer("threads", 1, kMaxThreads, long(prof.num_threads())));
  const bool quick = args.flag("quick");
  const TuneBudget budget = tune_budget(quick, args.flag("smoke"));
  // The weight formats whose winners --shapes measures (each bit width at each group size).
  const std::vector<long> bits = args.integers("bits", 1, 8, {4});
  const std::vector<long> groups = args.integers("group", 16, 1 << 20, {32});
  const std::vector<std::pair<int, int>> shapes = args.has("shapes") ? parse_shapes(args.str("shapes"))
                                                                     : std::vector<std::pair<int, int>>{};
  const std::string name = args.str("name", std::string(uarch_name(prof.main_uarch())) + "-" + today());
  std::string out_path = args.str("out");
  if (out_path.empty()) {
    const std::string dir = tuning_cache_dir();
    if (dir.empty()) throw UsageError("neither XDG_CACHE_HOME nor HOME is set: give --out FILE");
    out_path = dir + "/" + record_file_name(host_signature());
  }
  const Registry& reg = default_registry();

  // 1. Caches: where a plain read's bandwidth steps down (CPUID sizes are not trusted).
  progress("caches: read bandwidth from 64 KiB to " + cache_size_to_string(size_t(budget.sweep_max_bytes)));
  const Sweep sweep = read_sweep(budget);
  const bool expect_l3 = prof.caches.l3 > 0 || default_caches(prof.main_uarch(), prof.arch).l3 > 0;
  CacheLevels caches = cache_levels(sweep.sizes, sweep.bytes_per_cycle, expect_l3);
  bool l2_found = caches.l2 >= 128 * 1024 && caches.l2 <= (64u << 20);
  if (!l2_found) {  // no step where an L2 can be: measure with the CPU's size, record none
    progress("caches: no L2 step in the sweep; using the CPU's " + cache_size_to_string(prof.caches.l2));
    caches.l2 = prof.caches.l2;
  }
  // A core's own L2 is reported reliably (unlike a shared L3): a step more than 2x away from it
  // is a noisy sweep (one run here put it at 5.8 MiB on a 512 KiB L2), and sizing the
  // "L2-resident" kernel timings by it would time DRAM.
  if (l2_found && prof.caches.l2 > 0 && (caches.l2 > 2 * prof.caches.l2 || 2 * caches.l2 < prof.caches.l2)) {
    progress("caches: the sweep's L2 step at " + cache_size_to_string(caches.l2) + " is over 2x from the CPU's " +
             cache_size_to_string(prof.caches.l2) + ": using the CPU's");
    caches.l2 = prof.caches.l2;
    l2_found = false;
  }
  if (caches.l3 != 0 && caches.l3 < 2 * caches.l2) caches.l3 = 0;  // not a level of its own
  progress("caches: L2 " + cache_size_to_string(caches.l2) + ", L3 " + cache_size_to_string(caches.l3));

  // 2. Every kernel that runs here: cost terms fitted to L2-resident calls.
  TuningRecord rec = record_for_this_machine(name);
  // Each kernel's record entry, and for the report the sample its fit explains worst and how
  // many samples were timed again.
  struct Fitted {
    const KernelDesc* kd;
    KernelEntry entry;
    std::string worst_at;
    int retimed = 0;
  };
  auto fit = [&](Fitted& f, const std::vector<KernelSample>& samples) {
    const KernelFit kf = fit_kernel(samples, reg.layout(f.kd->layout_id)->nr);
    f.entry.cost = kf.cost;
    f.entry.fit_error = std::min(kf.worst_error, kMaxFitError);
    f.entry.samples = kf.samples;
    f.worst_at.clear();
    if (kf.worst_sample >= 0) {
      const KernelSample& s = samples[size_t(kf.worst_sample)];
      f.worst_at = concat(s.bits, "-bit g", s.group, " ", s.rows, "x", s.cols, ": ", fmt(s.cycles, 0),
                          " cycles, model ", fmt(predict_cycles(kf.cost, s), 0));
    }
  };
  std::vector<const KernelDesc*> runnable;
  for (const KernelDesc& kd : reg.kernels())
    if (kd.fn != nullptr && prof.isa.contains(kd.requires)) runnable.push_back(&kd);
  KernelTimings timings(runnable, budget, caches.l2);
  timings.time_all();
  std::vector<std::vector<KernelSample>> samples_of = timings.samples();
  std::vector<Fitted> fits;
  for (size_t i = 0; i < runnable.size(); ++i) {
    Fitted f{runnable[i], {}, "", 0};
    f.entry.name = f.kd->name;
    f.entry.identity = reg.identity(*f.kd);
    fit(f, samples_of[i]);
    fits.push_back(f);
  }

  // 3. Bandwidth at each level, 1..T workers: of the memory, and as each SIMD kernel reads
  //    (the scalar kernels never wait for memory).
  progress("bandwidth: L2, L3" + std::string(budget.dram ? ", DRAM" : "") + " at 1.." + std::to_string(threads) + " threads");
  rec.bandwidth = level_bandwidth(nullptr, caches, threads, budget);
  const Tuning no_record;  // the distances the planner runs without a record (generic, else the registry's)
  for (Fitted& f : fits) {
    if (reg.layout(f.kd->layout_id)->arch == Arch::unknown) continue;
    // A kernel that prefetches its weights: the distance this CPU's memory wants first
    // (docs/tuning.md), then its bandwidth at that distance.
    uint32_t prefetch = no_record.prefetch_distance(reg, *f.kd, prof).bytes;
    if (prefetch > 0 && budget.prefetch) {
      const std::vector<PrefetchTiming> pt = prefetch_timings(*f.kd, caches, budget);
      prefetch = choose_prefetch(pt, prefetch, kPrefetchMargin);
      f.entry.prefetch_bytes = int(prefetch);
      std::string times;
      for (const PrefetchTiming& t : pt)
        times += concat(times.empty() ? "" : ", ", t.bytes, " B ", fmt(t.ns * 1e-3, 0), " µs");
      progress(concat("  ", f.kd->name, budget.dram ? " from DRAM" : " (1 MiB, not DRAM)", ", geomean over its widths: ", times, " -> ",
                      prefetch, " B"));
    }
    f.entry.bandwidth = level_bandwidth(f.kd, caches, threads, budget, prefetch);
  }

  // 4. The thread pool: per parallel call and per task.
  progress("threading: 1.." + std::to_string(threads) + " workers");
  const Threading th = threading_cost(threads, budget);

  // Kernels again: a slow phase of the machine (minutes long on the development VMs) inflates
  // the timings made during it, by up to 1.5x. The calls measured over kRetimeAbove above their
  // fit (at most a quarter of each kernel's) are timed again, after the bandwidth and thread
  // pool stages so that time has passed; each keeps its faster timing (a slow phase only adds
  // time), and their kernels are fitted again.
  std::vector<std::vector<size_t>> slow;
  for (size_t i = 0; i < fits.size(); ++i) {
    slow.push_back(slow_samples(samples_of[i], fits[i].entry.cost, kRetimeAbove, samples_of[i].size() / 4));
    fits[i].retimed = int(slow.back().size());
  }
  timings.retime(slow);
  samples_of = timings.samples();
  int retimed = 0;
  for (size_t i = 0; i < fits.size(); ++i) {
    retimed += fits[i].retimed;
    if (fits[i].retimed > 0) fit(fits[i], samples_of[i]);
    rec.kernels.push_back(fits[i].entry);
  }

  rec.caches = {prof.caches.l1d, l2_found ? caches.l2 : 0, caches.l3};
  rec.task_cycles = th.task_cycles;
  rec.dispatch_cycles = th.dispatch_cycles;
  double worst = 0.0;
  std::string worst_kernel;
  int samples = 0;
  for (const KernelEntry& e : rec.kernels) {
    samples += e.samples;
    if (e.fit_error > worst) {
      worst = e.fit_error;
      worst_kernel = e.name;
    }
  }

  // 5. With --shapes: the planner's top candidates head to head, under the numbers just fitted.
  std::vector<ShapeCase> cases;
  const std::vector<int> ladder = args.flag("smoke") ? std::vector<int>{1, 4}
                                                     : std::vector<int>{1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 256};
  if (!shapes.empty()) {
    const ScopedTuning scope(std::make_shared<Tuning>(std::make_shared<TuningRecord>(rec), "this run of lowbit tune"));
    for (long b : bits)
      for (long g : groups) {
        const std::vector<ShapeCase> c = measure_shapes(shapes, ladder, threads, int(b), int(g), budget, &rec.overrides);
        cases.insert(cases.end(), c.begin(), c.end());
      }
  }
  rec.source = concat("lowbit tune", quick ? " --quick" : "", " --threads ", threads,
                      shapes.empty() ? "" : " --shapes " + args.str("shapes"),
                      args.has("bits") ? " --bits " + args.str("bits") : "",
                      args.has("group") ? " --group " + args.str("group") : "", " on ", today(), " (lowbit ",
                      library_version(), "): ", samples, " kernel timings (", retimed, " timed again, worst fit error ",
                      fmt(worst * 100, 1), " %), ", sweep.sizes.size(), " read sizes, ", cases.size(), " shape cases");

  const std::string text = record_to_json(rec);
  parse_record(text);  // what the lookup will accept: a record that fails here is a bug to report
  const std::filesystem::path path(out_path);
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  {
    std::ofstream f(out_path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) fail(Status::io_error, "cannot write ", out_path);
  }
  const double seconds = (now_ns() - t_start) * 1e-9;
  progress(concat("wrote ", out_path, " in ", fmt(seconds, 1), " s"));

  if (args.flag("json")) {
    Json j;
    j.begin_object().field("record", out_path).field("name", rec.name).field("seconds", seconds);
    j.field("threads", threads).field("quick", quick);
    j.key("caches").begin_object().field("l2", (unsigned long)caches.l2).field("l3", (unsigned long)caches.l3);
    j.key("sweep").begin_array();
    for (size_t i = 0; i < sweep.sizes.size(); ++i)
      j.begin_object().field("bytes", sweep.sizes[i]).field("bytes_per_cycle", sweep.bytes_per_cycle[i]).end_object();
    j.end_array().end_object();
    j.key("bandwidth");
    bandwidth_json(j, rec.bandwidth);
    j.key("threading").begin_object().field("task_cycles", th.task_cycles);
    j.key("dispatch_cycles").begin_array();
    for (double d : th.dispatch_cycles) j.value(d);
    j.end_array().end_object();
    j.key("kernels").begin_array();
    for (const Fitted& f : fits) {
      const KernelEntry& e = f.entry;
      j.begin_object().field("name", e.name).field("samples", e.samples).field("retimed", f.retimed)
          .field("worst_error", e.fit_error).field("worst_at", f.worst_at);
      j.field("call", double(e.cost.call)).field("group", double(e.cost.group)).field("group_row", double(e.cost.group_row));
      j.key("unpack").begin_array();
      for (int b = 1; b <= 8; ++b) j.value(double(e.cost.unpack[b]));
      j.end_array().key("dot").begin_array();
      for (int b = 1; b <= 8; ++b) j.value(double(e.cost.dot[b]));
      j.end_array();
      j.key("bandwidth");
      bandwidth_json(j, e.bandwidth);
      if (e.prefetch_bytes >= 0) j.field("prefetch_bytes", e.prefetch_bytes);
      j.end_object();
    }
    j.end_array();
    j.key("shapes").begin_array();
    for (const ShapeCase& c : cases)
      j.begin_object().field("n", c.n).field("k", c.k).field("bits", c.bits).field("group", c.group).field("m", c.m).field("threads", c.threads)
          .field("chosen", c.chosen).field("best", c.best).field("speedup", c.speedup)
          .field("speedup_again", c.speedup_again).field("override", c.override_recorded).end_object();
    j.end_array();
    j.field("overrides", (unsigned long)rec.overrides.size()).field("worst_error", worst)
        .field("worst_kernel", worst_kernel).field("retimed", retimed);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("lowbit tune: %s, %d thread(s)%s, %.1f s\n", rec.cpu.isa.to_string().c_str(), threads,
              quick ? ", quick" : "", seconds);
  std::printf("caches (where read bandwidth steps down): L2 %s, L3 %s (the CPU reports L2 %s, L3 %s)\n",
              cache_size_to_string(caches.l2).c_str(), cache_size_to_string(caches.l3).c_str(),
              cache_size_to_string(prof.caches.l2).c_str(), cache_size_to_string(prof.caches.l3).c_str());
  std::printf("memory bandwidth, bytes/cycle per worker at 1..%d workers: L2 %s, L3 %s, DRAM %s\n", threads,
              table_text(rec.bandwidth.l2).c_str(), table_text(rec.bandwidth.l3).c_str(),
              table_text(rec.bandwidth.dram).c_str());
  std::printf("thread pool: %.0f cycles per task, %s cycles per call\n\n", th.task_cycles,
              table_text(th.dispatch_cycles).c_str());
  std::vector<std::vector<std::string>> t = {
      {"kernel", "samples", "retimed", "unpack (4-bit)", "dot (4-bit)", "3-bit / 4-bit", "call", "group", "group_row",
       "DRAM bytes/cycle", "worst error", "at (bits, group, rows x cols)"}};
  for (const Fitted& f : fits) {
    const KernelEntry& e = f.entry;
    t.push_back({e.name, std::to_string(e.samples), std::to_string(f.retimed), fmt(e.cost.unpack[4], 4),
                 fmt(e.cost.dot[4], 4),
                 e.cost.dot[4] > 0 ? fmt((e.cost.unpack[3] + e.cost.dot[3]) / (e.cost.unpack[4] + e.cost.dot[4]), 2) : "-",
                 fmt(e.cost.call, 0), fmt(e.cost.group, 2), fmt(e.cost.group_row, 3), table_text(e.bandwidth.dram),
                 fmt(e.fit_error * 100, 1) + " %", f.worst_at});
  }
  print_table(t);
  if (!cases.empty()) {
    std::printf("\nshapes: %zu cases, %zu overrides (another candidate measured >= 3 %% faster, and again after the "
                "other cases)\n", cases.size(), rec.overrides.size());
    std::vector<std::vector<std::string>> s = {
        {"n x k", "weights", "m", "threads", "model's choice / best", "again", "override"}};
    for (const ShapeCase& c : cases)
      if (c.speedup_again > 0)
        s.push_back({std::to_string(c.n) + "x" + std::to_string(c.k), concat(c.bits, "-bit g", c.group), std::to_string(c.m),
                     std::to_string(c.threads), fmt(c.speedup, 3), fmt(c.speedup_again, 3),
                     c.override_recorded ? c.best : "(did not hold)"});
    print_table(s);
  }
  std::printf("\n%d kernel timings timed again (over %.0f %% above their first fit); worst fit error %.1f %% (%s); "
              "record %s\n", retimed, kRetimeAbove * 100, worst * 100, worst_kernel.c_str(), out_path.c_str());
  return 0;
}

}  // namespace lowbit::cli
