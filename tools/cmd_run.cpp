// `lowbit run`: the main demonstration. For every linear layer of a model preset: quantize
// random weights, pack for this CPU, show the kernels chosen for decode and prefill, check
// the result against the reference (bit-exact) and the float math (error), and time lowbit
// against OpenBLAS f32 in the same run.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "args.h"
#include "baselines.h"
#include "commands.h"
#include "describe.h"
#include "lowbit/lowbit.hpp"
#include "models.h"
#include "ops/linear.h"
#include "ops/reference.h"
#include "timing.h"
#include "workload.h"

namespace lowbit::cli {

namespace {

struct LayerResult {
  Layer layer;
  std::string decode_kernels, prefill_kernels;
  bool exact = false;
  double rel_err = 0;
  double decode_ns = 0, decode_blas_ns = 0, prefill_ns = 0, prefill_blas_ns = 0;
  double weight_bytes = 0;
};

LayerResult run_layer(const Layer& L, int bits, int group, int threads, int prefill_m, uint64_t seed) {
  LayerResult r;
  r.layer = L;
  std::vector<float> w = random_floats(size_t(L.n) * L.k, seed, 0.05f);
  const QuantizedWeights q = quantize_weights(w.data(), L.n, L.k, bits, group, false, ScaleFormat::bf16);
  const PackedWeights pw = PackedWeights::pack(q);
  r.weight_bytes = double(pw.info().payload_bytes);
  const std::vector<float> wf = dequantize_weights(q);  // OpenBLAS gets the same weights in f32
  w.clear();
  w.shrink_to_fit();

  const PackedBuffer& buf = pw.impl().buf;
  // As lowbit_linear plans them: with the working set of the weights alive.
  r.decode_kernels = plan_kernels_text(call_plan(default_registry(), host_profile(), buf.header, 1, threads));
  r.prefill_kernels = plan_kernels_text(call_plan(default_registry(), host_profile(), buf.header, prefill_m, threads));

  // Check on a sample: 3 rows against the reference on the first columns (bit-exact) and
  // against float math (relative RMS error).
  const int check_m = 3, check_n = std::min(L.n, 64);
  const std::vector<float> x = random_floats(size_t(prefill_m) * L.k, seed + 1, 1.0f);
  std::vector<float> y(size_t(prefill_m) * L.n);
  LinearOptions opt;
  opt.num_threads = threads;
  pw.linear(check_m, x.data(), y.data(), opt);
  const WeightProblem sub{check_n, L.k, bits, group, false, false};
  std::vector<float> ref(size_t(check_m) * check_n), flt(ref.size());
  reference_linear(sub, q.qvals.data(), q.scales.data(), nullptr, nullptr, check_m, x.data(), ref.data());
  float_reference_linear(sub, q.qvals.data(), q.scales.data(), nullptr, nullptr, check_m, x.data(), flt.data());
  r.exact = true;
  double num = 0, den = 0;
  for (int i = 0; i < check_m; ++i)
    for (int c = 0; c < check_n; ++c) {
      const float a = y[size_t(i) * L.n + c], b = ref[size_t(i) * check_n + c];
      r.exact &= std::memcmp(&a, &b, 4) == 0;
      const double f = flt[size_t(i) * check_n + c];
      num += (a - f) * (a - f);
      den += f * f;
    }
  r.rel_err = std::sqrt(num / std::max(den, 1e-30));

  // Each batch size: lowbit, and OpenBLAS next to it when this build has it (else NaN).
  auto time_m = [&](int m, int reps, double* lowbit_ns, double* blas_ns) {
    std::vector<std::function<void()>> fns = {[&] { pw.linear(m, x.data(), y.data(), opt); }};
    if (have_openblas())
      fns.push_back([&] { openblas_linear(m, L.n, L.k, x.data(), wf.data(), y.data(), threads); });
    const std::vector<double> t = contender_medians(fns, reps, threads);
    *lowbit_ns = t[0];
    *blas_ns = have_openblas() ? t[1] : std::nan("");
  };
  time_m(1, 9, &r.decode_ns, &r.decode_blas_ns);
  time_m(prefill_m, 3, &r.prefill_ns, &r.prefill_blas_ns);
  return r;
}

}  // namespace

int cmd_run(int argc, char** argv) {
  const Args args(argc, argv, {"json"}, {"model", "threads", "bits", "group", "m"});
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  const std::string name = args.str("model", "llama3-8b");
  const Model* model = nullptr;
  for (const Model& m : models())
    if (m.name == name) model = &m;
  if (model == nullptr) throw UsageError("unknown model '" + name + "' (llama3-8b, llama3.2-1b, qwen2.5-0.5b)");
  const int threads = int(args.integer("threads", 1, 1024, long(host_profile().num_threads())));
  const int bits = int(args.integer("bits", 1, 8, 4));
  const int group = int(args.integer("group", 16, 32768, 32));
  const int prefill_m = int(args.integer("m", 2, 4096, 128));
  const bool json = args.flag("json");
  if (!json)
    std::printf("lowbit run: %s, %d-bit weights, group %d, %d thread(s); decode m=1, prefill m=%d\n%s\n",
                model->name.c_str(), bits, group, threads, prefill_m, profile_text(host_profile()).c_str());

  std::vector<LayerResult> results;
  for (size_t i = 0; i < model->layers.size(); ++i) {
    const Layer& L = model->layers[i];
    std::fprintf(stderr, "\r[%zu/%zu] %-9s %5d x %-5d: pack, check, time...   ", i + 1, model->layers.size(),
                 L.name.c_str(), L.n, L.k);
    results.push_back(run_layer(L, bits, group, threads, prefill_m, 1000 + i));
  }
  std::fprintf(stderr, "\r%*s\r", 70, "");

  double dec = 0, dec_blas = 0, pre = 0, pre_blas = 0, bytes = 0;
  for (const LayerResult& r : results) {
    dec += r.decode_ns;
    dec_blas += r.decode_blas_ns;
    pre += r.prefill_ns;
    pre_blas += r.prefill_blas_ns;
    bytes += r.weight_bytes;
  }
  if (json) {
    Json j;
    j.begin_object().field("model", model->name).field("bits", bits).field("group", group)
        .field("threads", threads).field("prefill_m", prefill_m);
    j.key("layers").begin_array();
    for (const LayerResult& r : results)
      j.begin_object().field("name", r.layer.name).field("n", r.layer.n).field("k", r.layer.k)
          .field("decode_kernels", r.decode_kernels).field("prefill_kernels", r.prefill_kernels)
          .field("bit_exact", r.exact).field("rel_error_vs_float", r.rel_err)
          .field("decode_ms", r.decode_ns * 1e-6).field("decode_openblas_ms", r.decode_blas_ns * 1e-6)
          .field("decode_weight_gbps", r.weight_bytes / r.decode_ns)
          .field("prefill_ms", r.prefill_ns * 1e-6).field("prefill_openblas_ms", r.prefill_blas_ns * 1e-6)
          .end_object();
    j.end_array();
    j.key("per_token").begin_object().field("blocks", model->blocks)
        .field("decode_ms", dec * 1e-6 * model->blocks).field("decode_openblas_ms", dec_blas * 1e-6 * model->blocks)
        .field("prefill_ms_per_token", pre * 1e-6 * model->blocks / prefill_m)
        .field("prefill_openblas_ms_per_token", pre_blas * 1e-6 * model->blocks / prefill_m).end_object();
    j.end_object();
    std::printf("%s\n", j.str().c_str());
  } else {
    std::vector<std::vector<std::string>> rows = {{"layer", "n x k", "decode kernel", "prefill kernel",
                                                   "exact", "err", "decode ms", "GB/s", "BLAS ms", "x",
                                                   "prefill ms", "BLAS ms", "x"}};
    for (const LayerResult& r : results)
      rows.push_back({r.layer.name, std::to_string(r.layer.n) + "x" + std::to_string(r.layer.k),
                      r.decode_kernels, r.prefill_kernels, r.exact ? "yes" : "NO", fmt(r.rel_err, 4),
                      fmt(r.decode_ns * 1e-6, 3), fmt(r.weight_bytes / r.decode_ns, 1),
                      fmt(r.decode_blas_ns * 1e-6, 3), fmt(r.decode_blas_ns / r.decode_ns, 1),
                      fmt(r.prefill_ns * 1e-6, 2), fmt(r.prefill_blas_ns * 1e-6, 2),
                      fmt(r.prefill_blas_ns / r.prefill_ns, 1)});
    rows.push_back({"per token", "x" + std::to_string(model->blocks) + " blocks", "", "", "", "",
                    fmt(dec * 1e-6 * model->blocks, 2), fmt(bytes / dec, 1),
                    fmt(dec_blas * 1e-6 * model->blocks, 2), fmt(dec_blas / dec, 1),
                    fmt(pre * 1e-6 * model->blocks / prefill_m, 3),
                    fmt(pre_blas * 1e-6 * model->blocks / prefill_m, 3), fmt(pre_blas / pre, 1)});
    print_table(rows);
    if (!have_openblas()) std::printf("\nBLAS columns: n/a, %s.\n", missing_baselines().c_str());
    std::printf("\nexact: lowbit equals the scalar reference bit for bit on a 3x64 sample; err: relative RMS\n"
                "error against float math on unquantized activations. Times are medians (interleaved at one\n"
                "thread; at more, one after the other with a pause so neither library's spinning workers\n"
                "take the other's cores); x = OpenBLAS f32 time / lowbit time. Per-token prefill is per\n"
                "row of the batch.\n");
  }
  bool all_exact = true;
  for (const LayerResult& r : results) all_exact &= r.exact;
  return all_exact ? 0 : 1;
}


}  // namespace lowbit::cli
