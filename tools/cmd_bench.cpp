// `lowbit bench`: the shape suite, comparing in one run lowbit's selected plan, the scalar
// reference kernel, OpenBLAS f32 and oneDNN int8, by medians (timing.h: contender_medians).
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
  ExecPlan plan;
  plan.m = m;
  plan.threads = threads;
  const KernelDesc* k = default_registry().kernel(m >= 4 ? "qa8_qw_gemm_4x1c1__scalar" : "qa8_qw_gemm_1x1c1__scalar");
  plan.per_uarch[0].num_segments = 1;
  plan.per_uarch[0].seg[0] = {k, 0, m};
  plan.row_tile = (m + k->mr - 1) / k->mr * k->mr;
  plan.col_tile = 8;
  std::vector<float> y(size_t(m) * slice);
  const pthreadpool_t pool = pool_for_threads(threads);
  const double t = interleaved_medians(
      {[&] { execute_plan(plan, host_profile(), b, m, w.x.data(), y.data(), {}, pool, {}); }}, reps)[0];
  return t * double(w.problem.n) / slice;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  const Args args(argc, argv, {"json", "quick"}, {"reps"});
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
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
            const ExecPlan plan = make_plan(default_registry(), host_profile(), pw.impl().buf.header, m, threads);
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
