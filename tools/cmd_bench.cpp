// `lowbit bench`: the shape suite, comparing in one run lowbit's selected plan, the scalar
// reference kernel, OpenBLAS f32 and oneDNN int8, by medians (timing.h: contender_medians).
// `lowbit bench --tails`: latency percentiles of one shape at 1 and N threads, optionally
// while N busy processes compete for the cores.
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "args.h"
#include "baselines.h"
#include "commands.h"
#include "describe.h"
#include "format/layouts.h"
#include "format/packed_weights.h"
#include "lowbit/lowbit.hpp"
#include "ops/linear.h"
#include "ops/thread_pool.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "timing.h"
#include "workload.h"

namespace lowbit::cli {

namespace {

struct Row {
  int n, k, m, threads, bits, group;
  std::string kernels;
  double lowbit_ns, ref_ns, blas_ns, onednn_ns;
  double weight_bytes, stream_bps;
};

// The scalar reference kernel on a 64-column slice, scaled to n columns: the full reference
// at m = 128 would take minutes.
double reference_ns(const Workload& w, int m, int threads, int reps) {
  const int slice = std::min(w.problem.n, 64);
  WeightProblem p = w.problem;
  p.n = slice;
  const PackedBuffer b = pack_buffer(portable_layout(), p, w.q.data(), w.scales.data(), nullptr, nullptr);
  const KernelDesc* k = default_registry().kernel(m >= 4 ? "qa8_qw_gemm_4x1c1__scalar" : "qa8_qw_gemm_1x1c1__scalar");
  const ExecPlan plan = single_kernel_plan(*k, m, threads, 8);
  std::vector<float> y(size_t(m) * slice);
  ThreadPool* const pool = pool_for_threads(threads);
  const double t = interleaved_medians(
      {[&] { execute_plan(plan, host_profile(), b, m, w.x.data(), y.data(), {}, pool, {}); }}, reps)[0];
  return t * double(w.problem.n) / slice;
}

// Processes that spin on a core each for as long as they live; killed (by pid) on destruction
// and when lowbit dies.
class BusyProcesses {
 public:
  explicit BusyProcesses(int count) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid < 0) throw Error(Status::internal, "fork failed for a busy process");
      if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (volatile unsigned long spin = 0;; spin = spin + 1) {
        }
      }
      pids_.push_back(pid);
    }
  }
  ~BusyProcesses() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }

 private:
  std::vector<pid_t> pids_;
};

// Nearest-rank percentile of sorted samples.
double percentile(const std::vector<double>& sorted, double q) {
  const size_t rank = size_t(std::ceil(q * double(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// Latency percentiles of single calls at 1 and N threads. The two alternate in blocks (after
// a pause that lets the other's workers stop spinning, and one untimed call), so both see the
// same noise and the same load.
int bench_tails(const Args& args) {
  const bool json = args.flag("json"), quick = args.flag("quick");
  const int all = int(host_profile().num_threads());
  const int n = int(args.integer("n", 1, 1 << 20, quick ? 1024 : 4096));
  const int k = int(args.integer("k", 16, 1 << 20, quick ? 1024 : 4096));
  const int m = int(args.integer("m", 1, 1 << 16, 1));
  const int bits = int(args.integer("bits", 1, 8, 4));
  const int group = int(args.integer("group", 16, 1 << 20, 32));
  const int calls = int(args.integer("calls", 10, 10000000, quick ? 200 : 10000));
  const int threads = int(args.integer("threads", 1, 1024, all > 1 ? all : 2));
  const int busy = int(args.integer("busy", 0, 64, 0));
  const int block = std::min(calls, 500);
  const Workload w = make_workload({n, k, bits, group, false, false}, m, 3);
  const PackedWeights pw = PackedWeights::pack(n, k, bits, group, w.q.data(), w.scales.data(), nullptr, nullptr);
  std::vector<float> y(size_t(m) * n);
  const std::vector<int> thread_counts = threads > 1 ? std::vector<int>{1, threads} : std::vector<int>{1};
  std::vector<std::vector<double>> samples(thread_counts.size());
  {
    const BusyProcesses load(busy);
    for (int done = 0; done < calls; done += block)
      for (size_t i = 0; i < thread_counts.size(); ++i) {
        LinearOptions opt;
        opt.num_threads = thread_counts[i];
        settle();
        pw.linear(m, w.x.data(), y.data(), opt);
        for (int c = 0; c < std::min(block, calls - done); ++c) {
          const double t0 = now_ns();
          pw.linear(m, w.x.data(), y.data(), opt);
          samples[i].push_back(now_ns() - t0);
        }
      }
  }
  struct Tail {
    int threads;
    double p50, p90, p99, max;
  };
  std::vector<Tail> tails;
  for (size_t i = 0; i < thread_counts.size(); ++i) {
    std::vector<double>& v = samples[i];
    std::sort(v.begin(), v.end());
    tails.push_back({thread_counts[i], percentile(v, 0.5), percentile(v, 0.9), percentile(v, 0.99), v.back()});
  }
  if (json) {
    Json j;
    j.begin_object().field("profile", host_profile().to_spec()).field("n", n).field("k", k).field("m", m)
        .field("bits", bits).field("group", group).field("calls", calls).field("busy", busy);
    j.key("tails").begin_array();
    for (const Tail& t : tails)
      j.begin_object().field("threads", t.threads).field("p50_us", t.p50 * 1e-3).field("p90_us", t.p90 * 1e-3)
          .field("p99_us", t.p99 * 1e-3).field("max_us", t.max * 1e-3).end_object();
    j.end_array().end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("lowbit bench --tails: %dx%d m=%d %d-bit g%d, %d calls per thread count (blocks of %d,\n"
              "alternating), %d busy process(es)\n%s\n",
              n, k, m, bits, group, calls, block, busy, profile_text(host_profile()).c_str());
  std::vector<std::vector<std::string>> table = {{"threads", "p50 us", "p90 us", "p99 us", "max us", "p99/p50"}};
  for (const Tail& t : tails)
    table.push_back({std::to_string(t.threads), fmt(t.p50 * 1e-3, 1), fmt(t.p90 * 1e-3, 1),
                     fmt(t.p99 * 1e-3, 1), fmt(t.max * 1e-3, 1), fmt(t.p99 / t.p50, 2)});
  print_table(table);
  return 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  const Args args(argc, argv, {"json", "quick", "tails", "widths"},
                  {"reps", "n", "k", "m", "bits", "group", "calls", "threads", "busy", "case",
                   "decode-kernel", "prefill-kernel"});
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  if (args.flag("tails") && args.flag("widths")) throw UsageError("--tails and --widths are two different benches");
  if (args.flag("tails")) return bench_tails(args);
  if (args.flag("widths")) {
    for (const char* o : {"m", "group", "calls", "busy"})
      if (args.has(o)) throw UsageError(std::string("--") + o + " does not go with --widths");
    return bench_widths(args);
  }
  for (const char* o : {"case", "decode-kernel", "prefill-kernel"})
    if (args.has(o)) throw UsageError(std::string("--") + o + " goes with --widths");
  for (const char* o : {"n", "k", "m", "bits", "group", "calls", "threads", "busy"})
    if (args.has(o)) throw UsageError(std::string("--") + o + " goes with --tails");
  const bool quick = args.flag("quick"), json = args.flag("json");
  const int reps = int(args.integer("reps", 1, 1000, quick ? 3 : 7));
  const int all = int(host_profile().num_threads());
  std::vector<std::pair<int, int>> shapes = {{4096, 4096}, {6144, 4096}, {14336, 4096}, {4096, 14336}};
  std::vector<int> ms = {1, 4, 16, 64, 128}, bits_list = {2, 4, 8}, groups = {32, 128};
  std::vector<int> thread_list = all > 1 ? std::vector<int>{1, all} : std::vector<int>{1};
  if (quick) {
    shapes = {{1024, 1024}};
    ms = {1, 16};
    bits_list = {4};
    groups = {32};
    thread_list = {1};
  }
  const bool onednn = OneDnnMatmul::available();
  std::vector<Row> rows;
  size_t done = 0;
  const size_t total = shapes.size() * ms.size() * bits_list.size() * groups.size() * thread_list.size();
  for (const auto& [n, k] : shapes) {
    const std::vector<float> wf = random_floats(size_t(n) * k, 7, 0.05f);
    std::map<std::pair<int, int>, std::pair<double, double>> baseline;  // (m, threads) -> blas, onednn
    for (int bits : bits_list)
      for (int group : groups) {
        const Workload w = make_workload({n, k, bits, group, false, false}, 128, 11);
        const PackedWeights pw = PackedWeights::pack(w.problem.n, w.problem.k, bits, group, w.q.data(),
                                                     w.scales.data(), nullptr, nullptr);
        const double bytes = double(pw.info().payload_bytes);
        const double stream = stream_read_bandwidth(size_t(bytes), reps);
        for (int m : ms)
          for (int threads : thread_list) {
            std::fprintf(stderr, "\r[%zu/%zu] %dx%d m=%d %d-bit g%d %dT   ", ++done, total, n, k, m, bits, group, threads);
            std::vector<float> y(size_t(m) * n);
            LinearOptions opt;
            opt.num_threads = threads;
            auto& base = baseline[{m, threads}];
            std::unique_ptr<OneDnnMatmul> dnn;
            if (onednn && base.second == 0) dnn = std::make_unique<OneDnnMatmul>(m, n, k, threads);
            std::vector<std::function<void()>> fns = {[&] { pw.linear(m, w.x.data(), y.data(), opt); }};
            const bool blas = have_openblas() && base.first == 0;
            if (blas) fns.push_back([&] { openblas_linear(m, n, k, w.x.data(), wf.data(), y.data(), threads); });
            if (dnn) fns.push_back([&] { dnn->run(); });
            const std::vector<double> t = contender_medians(fns, reps, threads);
            if (!have_openblas()) base.first = std::nan("");
            else if (blas) base.first = t[1];
            if (dnn) base.second = t[blas ? 2 : 1];
            const ExecPlan plan = call_plan(default_registry(), host_profile(), pw.impl().buf.header, m, threads);
            rows.push_back({n, k, m, threads, bits, group, plan_kernels_text(plan), t[0],
                            reference_ns(w, m, threads, std::max(1, reps / 3)), base.first, base.second,
                            bytes, stream});
          }
      }
  }
  std::fprintf(stderr, "\r%*s\r", 60, "");
  auto gops = [](const Row& r, double ns) { return 2.0 * r.m * r.n * r.k / ns; };
  if (json) {
    Json j;
    j.begin_object().field("profile", host_profile().to_spec()).field("reps", reps).field("openblas", have_openblas()).field("onednn", onednn);
    j.key("rows").begin_array();
    for (const Row& r : rows) {
      j.begin_object().field("n", r.n).field("k", r.k).field("m", r.m).field("threads", r.threads)
          .field("bits", r.bits).field("group", r.group).field("kernels", r.kernels)
          .field("lowbit_ms", r.lowbit_ns * 1e-6).field("lowbit_gops", gops(r, r.lowbit_ns))
          .field("reference_ms", r.ref_ns * 1e-6).field("openblas_ms", r.blas_ns * 1e-6)
          .field("speedup_vs_reference", r.ref_ns / r.lowbit_ns).field("speedup_vs_openblas", r.blas_ns / r.lowbit_ns);
      j.key("onednn_ms");
      if (onednn) j.value(r.onednn_ns * 1e-6); else j.null();
      j.key("speedup_vs_onednn");
      if (onednn) j.value(r.onednn_ns / r.lowbit_ns); else j.null();
      if (r.m == 1)
        j.field("weight_gbps", r.weight_bytes / r.lowbit_ns).field("stream_gbps", r.stream_bps * 1e-9);
      j.end_object();
    }
    j.end_array().end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("lowbit bench: medians of %d runs (interleaved at 1 thread; at more, one contender after another,\n"
              "after a pause that lets the others' worker threads stop spinning); reference = scalar kernel\n"
              "on 64 columns, scaled\n%s\n",
              reps, profile_text(host_profile()).c_str());
  std::vector<std::vector<std::string>> table = {{"n x k", "m", "T", "bits", "g", "lowbit ms", "GOPS", "x ref",
                                                  "x BLAS", "x oneDNN", "GB/s", "stream", "kernels"}};
  for (const Row& r : rows)
    table.push_back({std::to_string(r.n) + "x" + std::to_string(r.k), std::to_string(r.m),
                     std::to_string(r.threads), std::to_string(r.bits), std::to_string(r.group),
                     fmt(r.lowbit_ns * 1e-6, 3), fmt(gops(r, r.lowbit_ns), 1), fmt(r.ref_ns / r.lowbit_ns, 1),
                     fmt(r.blas_ns / r.lowbit_ns, 1), onednn ? fmt(r.onednn_ns / r.lowbit_ns, 2) : "n/a",
                     r.m == 1 ? fmt(r.weight_bytes / r.lowbit_ns, 1) : "",
                     r.m == 1 ? fmt(r.stream_bps * 1e-9, 1) : "", r.kernels});
  print_table(table);
  if (!missing_baselines().empty()) std::printf("\nn/a: %s.\n", missing_baselines().c_str());
  std::printf("\nx ref / x BLAS / x oneDNN: how many times faster lowbit is. GB/s: packed weight bytes read\n"
              "per second at m = 1; stream: the fastest plain read of the same number of bytes.\n"
              "oneDNN runs a per-channel int8 matmul (not groupwise): a speed reference only.\n");
  return 0;
}

}  // namespace lowbit::cli
