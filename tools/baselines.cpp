#include "baselines.h"

#include <cstdint>
#include <cstring>
#include <functional>

#if LOWBIT_HAVE_OPENBLAS
#include <cblas.h>
#endif
#if LOWBIT_HAVE_ONEDNN
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

#include "ops/thread_pool.h"
#include "timing.h"
#include "util/error.h"

namespace lowbit::cli {

bool have_openblas() { return LOWBIT_HAVE_OPENBLAS; }
bool have_onednn() { return LOWBIT_HAVE_ONEDNN; }

std::string missing_baselines() {
  std::string names, pkgs;
  if (!have_openblas()) names += "OpenBLAS", pkgs += " libopenblas-dev";
  if (!have_onednn()) names += names.empty() ? "oneDNN" : " and oneDNN", pkgs += " libdnnl-dev";
  if (names.empty()) return "";
  return "this build has no " + names + " baseline (apt-get install" + pkgs +
         ", then reconfigure with LOWBIT_BASELINES=AUTO or ON)";
}

#if LOWBIT_HAVE_OPENBLAS
void openblas_linear(int m, int n, int k, const float* x, const float* w, float* y, int threads) {
  openblas_set_num_threads(threads);
  if (m == 1)
    cblas_sgemv(CblasRowMajor, CblasNoTrans, n, k, 1.0f, w, k, x, 1, 0.0f, y, 1);
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, k, 1.0f, x, k, w, k, 0.0f, y, n);
}
#else
void openblas_linear(int, int, int, const float*, const float*, float*, int) {
  fail(Status::unsupported, missing_baselines());
}
#endif

#if LOWBIT_HAVE_ONEDNN
struct OneDnnMatmul::Impl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::matmul prim;
  dnnl::memory src, wei, dst, zp;
  int threads;
};

OneDnnMatmul::OneDnnMatmul(int m, int n, int k, int threads) : impl_(new Impl) {
  using dt = dnnl::memory::data_type;
  using tag = dnnl::memory::format_tag;
  Impl& s = *impl_;
  s.threads = threads;
  omp_set_num_threads(threads);
  const dnnl::memory::desc src_md({m, k}, dt::u8, tag::ab), dst_md({m, n}, dt::f32, tag::ab);
  const dnnl::memory::desc wei_any({k, n}, dt::s8, tag::any), wei_plain({k, n}, dt::s8, tag::ba);
  dnnl::primitive_attr attr;
  attr.set_output_scales(1 << 1, std::vector<float>(size_t(n), 0.01f));
  attr.set_zero_points(DNNL_ARG_SRC, 0, {DNNL_RUNTIME_S32_VAL});
  const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_any, dst_md), attr, s.eng);
  s.prim = dnnl::matmul(pd);
  s.src = dnnl::memory(pd.src_desc(), s.eng);
  s.dst = dnnl::memory(pd.dst_desc(), s.eng);
  s.wei = dnnl::memory(pd.weights_desc(), s.eng);
  s.zp = dnnl::memory({{1}, dt::s32, tag::x}, s.eng);
  std::memset(s.src.get_data_handle(), 3, size_t(m) * k);
  *static_cast<int32_t*>(s.zp.get_data_handle()) = 128;
  // Weights arrive in a plain layout and are reordered once, as an integration would.
  dnnl::memory plain(wei_plain, s.eng);
  std::memset(plain.get_data_handle(), 1, size_t(k) * n);
  dnnl::reorder(plain, s.wei).execute(s.strm, plain, s.wei);
  s.strm.wait();
}

OneDnnMatmul::~OneDnnMatmul() = default;

void OneDnnMatmul::run() {
  Impl& s = *impl_;
  omp_set_num_threads(s.threads);
  s.prim.execute(s.strm, {{DNNL_ARG_SRC, s.src}, {DNNL_ARG_WEIGHTS, s.wei}, {DNNL_ARG_DST, s.dst},
                          {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, s.zp}});
  s.strm.wait();
}

bool OneDnnMatmul::available() {
  try {
    OneDnnMatmul probe(1, 16, 16, 1);
    probe.run();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
}
#else
struct OneDnnMatmul::Impl {};
OneDnnMatmul::OneDnnMatmul(int, int, int, int) { fail(Status::unsupported, missing_baselines()); }
OneDnnMatmul::~OneDnnMatmul() = default;
void OneDnnMatmul::run() {}
bool OneDnnMatmul::available() { return false; }
#endif

namespace {

uint64_t read_one_chain(const uint64_t* p, size_t n) {
  uint64_t a = 0;
  for (size_t i = 0; i < n; ++i) a ^= p[i];
  return a;
}
uint64_t read_four_chains(const uint64_t* p, size_t n) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i + 4 <= n; i += 4) {
    a ^= p[i];
    b ^= p[i + 1];
    c ^= p[i + 2];
    d ^= p[i + 3];
  }
  return a ^ b ^ c ^ d;
}
uint64_t read_four_streams(const uint64_t* p, size_t n) {
  const size_t q = n / 4;
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i < q; ++i) {
    a ^= p[i];
    b ^= p[q + i];
    c ^= p[2 * q + i];
    d ^= p[3 * q + i];
  }
  return a ^ b ^ c ^ d;
}

// The four streams with a software prefetch 1 KiB ahead in each: an Intel Xeon core (Sapphire
// Rapids class) reads DRAM ~15% faster so, and the GEMVs prefetch too; without it "of stream"
// compared them with a slower read and came out above 1.
uint64_t read_four_streams_prefetched(const uint64_t* p, size_t n) {
  constexpr size_t kAhead = 1024 / sizeof(uint64_t), kLine = 64 / sizeof(uint64_t);
  const size_t q = n / 4 / kLine * kLine;
  uint64_t a = 0, b = 0, c = 0, d = 0;
  for (size_t i = 0; i < q; i += kLine) {
    for (size_t s = 0; s < 4; ++s) __builtin_prefetch(p + s * q + i + kAhead);
    for (size_t j = i; j < i + kLine; ++j) {
      a ^= p[j];
      b ^= p[q + j];
      c ^= p[2 * q + j];
      d ^= p[3 * q + j];
    }
  }
  return a ^ b ^ c ^ d;
}

}  // namespace

const std::vector<ReadLoop>& read_loops() {
  static const std::vector<ReadLoop> loops = {read_one_chain, read_four_chains, read_four_streams,
                                              read_four_streams_prefetched};
  return loops;
}

namespace {

// run_tasks' job: a rescue declines, so each task runs on the thread that took it.
class FnJob final : public TaskJob {
 public:
  explicit FnJob(const std::function<void(size_t)>& task) : task_(task) {}
  bool run(uint32_t t, float*, bool rescue) override {
    if (rescue) return false;
    task_(t);
    return true;
  }
  size_t scratch_floats(uint32_t) const override { return 1; }
  void commit(uint32_t, const float*) override {}

 private:
  const std::function<void(size_t)>& task_;
};

}  // namespace

void run_tasks(ThreadPool* pool, size_t tasks, const std::function<void(size_t)>& task) {
  if (pool == nullptr) {
    for (size_t i = 0; i < tasks; ++i) task(i);
    return;
  }
  FnJob* job = new FnJob(task);
  pool->run(*job, uint32_t(tasks), true);
  TaskJob::release(job);
}

double stream_read_bandwidth(size_t bytes, int reps) {
  std::vector<uint64_t> buf(bytes / 8 + 1, 1);
  volatile uint64_t sink = 0;
  double best = 0;
  for (ReadLoop fn : read_loops()) {
    const double t = interleaved_medians({[&] { sink = sink + fn(buf.data(), buf.size()); }}, reps)[0];
    best = std::max(best, double(bytes) / (t * 1e-9));
  }
  return best;
}

}  // namespace lowbit::cli
