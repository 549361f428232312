#include "ops/linear.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "cpu/current_core.h"
#include "format/layouts.h"
#include "ops/thread_pool.h"
#include "select/explain.h"
#include "select/select_layout.h"
#include "util/error.h"

namespace lowbit {

bool log_select() {
  static const bool on = [] {
    const char* v = std::getenv("LOWBIT_LOG");
    return v != nullptr && std::strstr(v, "select") != nullptr;
  }();
  return on;
}

namespace {

// Debian's pthreadpool is not built with TSan, so TSan cannot see the happens-before edges its
// dispatch and join give; these annotations state them (no-ops in other builds).
#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
inline void pool_handoff_release(void* job) { __tsan_release(job); }
inline void pool_handoff_acquire(void* job) { __tsan_acquire(job); }
#else
inline void pool_handoff_release(void*) {}
inline void pool_handoff_acquire(void*) {}
#endif

struct LhsRef {
  LhsFormat format;
  int row_begin = 0, rows = 0;
  size_t offset = 0, block_bytes = 0;
};

struct Job {
  const ExecPlan* plan;
  const CpuProfile* profile;
  const PackedBuffer* w;
  GemmShape shape;
  const uint8_t* lhs;
  // lhs_of[u][s]: LHS of segment s of uarch plan u.
  const LhsRef* lhs_of[kMaxUarchs][kMaxSegments];
  float* y;
  int m, n;
  float clamp_min, clamp_max;
  UarchSource uarch_source;
};

void run_task(Job* job, uint32_t pool_uarch, size_t r0, size_t c0, size_t rsize, size_t csize) {
  // Each worker looks up its own core (Debian's pthreadpool is built without cpuinfo, so the
  // index it passes is always the default).
  const uint32_t u = job->uarch_source.fn ? job->uarch_source.fn(job->uarch_source.ctx, pool_uarch)
                     : job->plan->num_uarchs > 1 ? current_core_uarch_index(*job->profile)
                                                 : 0;
  const uint32_t ui = u < uint32_t(job->plan->num_uarchs) ? u : 0;
  const UarchPlan& up = job->plan->per_uarch[ui];
  const PackedGeometry& g = job->w->geo;
  const size_t n = std::min<size_t>(csize, size_t(job->n) - c0);
  // With several row blocks, columns go in chunks whose weights fit half of L2, each chunk
  // over every block: later blocks re-read it from L2, not L3 (Zen 3, m = 128: a 4096-column
  // tile re-read from L3 is 1.26x slower than 128-column chunks).
  size_t blocks = 0;
  for (int s = 0; s < up.num_segments; ++s) {
    const size_t lo = std::max<size_t>(size_t(up.seg[s].row_begin), r0);
    const size_t hi = std::min<size_t>(size_t(up.seg[s].row_begin + up.seg[s].rows), r0 + rsize);
    if (hi > lo) blocks += (hi - lo + size_t(up.seg[s].kernel->mr) - 1) / size_t(up.seg[s].kernel->mr);
  }
  const size_t nr = size_t(g.nr), col_bytes = g.panel_bytes / nr;
  const size_t chunk = blocks > 1 ? std::max(nr, job->profile->caches.l2 / 2 / col_bytes / nr * nr) : n;
  for (size_t cc = 0; cc < n; cc += chunk) {
    const size_t c = c0 + cc;
    for (int s = 0; s < up.num_segments; ++s) {
      const Segment& seg = up.seg[s];
      const LhsRef& lr = *job->lhs_of[ui][s];
      const size_t lo = std::max<size_t>(size_t(seg.row_begin), r0);
      const size_t hi = std::min<size_t>(size_t(seg.row_begin + seg.rows), r0 + rsize);
      for (size_t row = lo; row < hi; row += size_t(seg.kernel->mr)) {
        const size_t block = (row - size_t(lr.row_begin)) / size_t(lr.format.mr);
        UKernelArgs a;
        a.m = std::min<size_t>(size_t(seg.kernel->mr), hi - row);
        a.n = std::min(chunk, n - cc);
        a.lhs = job->lhs + lr.offset + block * lr.block_bytes;
        a.rhs = job->w->payload() + (c / nr) * g.panel_bytes;
        a.bias = g.has_bias ? reinterpret_cast<const float*>(job->w->payload() + g.bias_offset) + c : nullptr;
        a.y = job->y + row * size_t(job->n) + c;
        a.y_stride = size_t(job->n);
        a.clamp_min = job->clamp_min;
        a.clamp_max = job->clamp_max;
        seg.kernel->fn(job->shape, a);
      }
    }
  }
}

void task_2d(void* ctx, uint32_t uarch, size_t r0, size_t c0, size_t rsize, size_t csize) {
  pool_handoff_acquire(ctx);
  run_task(static_cast<Job*>(ctx), uarch, r0, c0, rsize, csize);
  pool_handoff_release(ctx);
}

void task_2d_any(void* ctx, size_t r0, size_t c0, size_t rsize, size_t csize) {
  task_2d(ctx, 0, r0, c0, rsize, csize);
}

}  // namespace

void execute_plan(const ExecPlan& plan, const CpuProfile& profile, const PackedBuffer& w, int m,
                  const float* x, float* y, const LinearOptions& opt, pthreadpool_t pool,
                  UarchSource uarch_source) {
  const PackedGeometry& g = w.geo;
  const int k = g.groups * g.group_size;
  // One LHS packing per distinct (format, rows) the per-uarch plans use.
  LhsRef refs[kMaxUarchs * kMaxSegments];
  int num_refs = 0;
  Job job;
  size_t total = 0;
  for (int u = 0; u < plan.num_uarchs; ++u)
    for (int s = 0; s < plan.per_uarch[u].num_segments; ++s) {
      const Segment& seg = plan.per_uarch[u].seg[s];
      int i = 0;
      while (i < num_refs && !(refs[i].format.mr == seg.kernel->lhs.mr &&
                               refs[i].format.kr == seg.kernel->lhs.kr &&
                               refs[i].row_begin == seg.row_begin && refs[i].rows == seg.rows))
        ++i;
      if (i == num_refs) {
        LhsRef& r = refs[num_refs++];
        r.format = seg.kernel->lhs;
        r.row_begin = seg.row_begin;
        r.rows = seg.rows;
        r.block_bytes = lhs_block_layout(r.format, size_t(k), size_t(g.groups)).block_bytes;
        r.offset = total;
        total += r.block_bytes * size_t((seg.rows + r.format.mr - 1) / r.format.mr);
      }
      job.lhs_of[u][s] = &refs[i];
    }
  thread_local AlignedBuffer lhs;  // grows to the largest call, then reused
  if (lhs.size() < total) lhs.resize(total);
  for (int i = 0; i < num_refs; ++i)
    pack_lhs(refs[i].format, size_t(refs[i].rows), size_t(k), size_t(g.group_size),
             x + size_t(refs[i].row_begin) * k, size_t(k), lhs.data() + refs[i].offset);

  job.plan = &plan;
  job.profile = &profile;
  job.w = &w;
  job.shape = GemmShape{&w.geo, k};
  job.lhs = lhs.data();
  job.y = y;
  job.m = m;
  job.n = g.n;
  job.clamp_min = opt.has_clamp ? opt.clamp_min : -std::numeric_limits<float>::infinity();
  job.clamp_max = opt.has_clamp ? opt.clamp_max : std::numeric_limits<float>::infinity();
  job.uarch_source = uarch_source;
  if (pool == nullptr) {
    for (size_t r0 = 0; r0 < size_t(m); r0 += size_t(plan.row_tile))
      for (size_t c0 = 0; c0 < size_t(g.n); c0 += size_t(plan.col_tile))
        run_task(&job, 0, r0, c0, std::min<size_t>(size_t(plan.row_tile), size_t(m) - r0),
                 std::min<size_t>(size_t(plan.col_tile), size_t(g.n) - c0));
    return;
  }
  pool_handoff_release(&job);
  if (plan.num_uarchs > 1 || uarch_source.fn != nullptr) {
    pthreadpool_parallelize_2d_tile_2d_with_uarch(
        pool, task_2d, &job, 0, uint32_t(plan.num_uarchs - 1), size_t(m), size_t(g.n),
        size_t(plan.row_tile), size_t(plan.col_tile), 0);
  } else {
    pthreadpool_parallelize_2d_tile_2d(pool, task_2d_any, &job, size_t(m), size_t(g.n),
                                       size_t(plan.row_tile), size_t(plan.col_tile), 0);
  }
  pool_handoff_acquire(&job);
}

void run_linear(const RunContext& ctx, const PackedBuffer& w, int m, const float* x, float* y,
                const LinearOptions& opt) {
  if (m < 1) fail(Status::invalid_argument, "m must be >= 1 (got ", m, ")");
  if (x == nullptr) fail(Status::invalid_argument, "x is NULL");
  if (y == nullptr) fail(Status::invalid_argument, "y is NULL");
  if (opt.has_clamp) {
    if (std::isnan(opt.clamp_min) || std::isnan(opt.clamp_max))
      fail(Status::invalid_argument, "clamp bounds must not be NaN");
    if (opt.clamp_min > opt.clamp_max)
      fail(Status::invalid_argument, "clamp_min ", opt.clamp_min, " > clamp_max ", opt.clamp_max);
  }
  if (opt.num_threads > kMaxThreads)
    fail(Status::invalid_argument, "num_threads ", opt.num_threads, " exceeds ", kMaxThreads);
  pthreadpool_t pool = ctx.pool;
  int threads = pool ? int(pthreadpool_get_threads_count(pool))
                     : (opt.num_threads > 0 ? opt.num_threads : int(ctx.profile->num_threads()));
  threads = std::max(threads, 1);
  if (pool == nullptr) pool = pool_for_threads(threads);

  const uint64_t key = plan_key(m, threads);
  const ExecPlan* plan = ctx.cache ? ctx.cache->find(key) : nullptr;
  ExecPlan fresh;
  if (plan == nullptr) {
    PlanExplanation ex;
    fresh = make_plan(*ctx.registry, *ctx.profile, w.header, m, threads, log_select() ? &ex : nullptr);
    if (log_select()) std::fprintf(stderr, "%s", format_plan(fresh, w.header, &ex).c_str());
    plan = ctx.cache ? ctx.cache->insert(fresh) : nullptr;
    if (plan == nullptr) plan = &fresh;
  }
  execute_plan(*plan, *ctx.profile, w, m, x, y, opt, pool, ctx.uarch_source);
}

// ---- C++ API -------------------------------------------------------------------------------

namespace {

// LOWBIT_ISA / LOWBIT_L* are read on first use; a malformed value is an argument error of the
// call that first needed the profile.
template <typename F>
auto with_env_checked(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    fail(Status::invalid_argument, e.what());
  }
}

PackedWeights wrap(PackedBuffer&& b) {
  auto impl = std::make_shared<PackedWeights::Impl>();
  impl->buf = std::move(b);
  return PackedWeights(std::move(impl));
}

const LayoutDesc& choose_layout(const WeightProblem& p, std::string_view target) {
  const CpuProfile prof = with_env_checked([&] { return target_profile(target); });
  const LayoutDecision d = select_layout(default_registry(), prof, p);
  if (log_select()) std::fprintf(stderr, "%s", format_layout_decision(d, p, prof).c_str());
  return *d.winner;
}

}  // namespace

PackedWeights PackedWeights::pack(int n, int k, int bits, int group_size, const int8_t* qvals,
                                  const float* scales, const int8_t* zeros, const float* bias,
                                  std::string_view target) {
  WeightProblem p{n, k, bits, group_size, zeros != nullptr, bias != nullptr};
  validate_weights(p, qvals, scales, bias);
  return wrap(pack_buffer(choose_layout(p, target), p, qvals, scales, zeros, bias));
}

PackedWeights PackedWeights::pack(const QuantizedWeights& q, const float* bias,
                                  std::string_view target) {
  const size_t nk = size_t(std::max(q.n, 0)) * size_t(std::max(q.k, 0));
  const size_t ng = q.group_size > 0 ? nk / size_t(q.group_size) : 0;
  if (q.qvals.size() != nk) fail(Status::invalid_argument, "qvals has ", q.qvals.size(), " values, expected n*k = ", nk);
  if (q.scales.size() != ng) fail(Status::invalid_argument, "scales has ", q.scales.size(), " values, expected ", ng);
  if (!q.zeros.empty() && q.zeros.size() != ng)
    fail(Status::invalid_argument, "zeros has ", q.zeros.size(), " values, expected ", ng);
  return pack(q.n, q.k, q.bits, q.group_size, q.qvals.data(), q.scales.data(),
              q.zeros.empty() ? nullptr : q.zeros.data(), bias, target);
}

PackedWeights PackedWeights::load(const std::string& path) { return wrap(read_file(path)); }

PackedWeights PackedWeights::from_buffer(const void* data, size_t size) {
  return wrap(parse_buffer(data, size));
}

PackedWeights PackedWeights::view(const void* data, size_t size) { return wrap(view_buffer(data, size)); }

void PackedWeights::save(const std::string& path) const { write_file(impl_->buf, path); }
const uint8_t* PackedWeights::data() const { return impl_->buf.data(); }
size_t PackedWeights::size() const { return impl_->buf.size(); }

PackedInfo PackedWeights::info() const {
  const PackedHeader& h = impl_->buf.header;
  PackedInfo i;
  i.layout = h.layout->name;
  i.layout_id = h.layout->id;
  i.n = h.problem.n;
  i.k = h.problem.k;
  i.bits = h.problem.bits;
  i.group_size = h.problem.group_size;
  i.has_zeros = h.problem.has_zeros;
  i.has_bias = h.problem.has_bias;
  i.nr = h.layout->nr;
  i.kr = h.layout->kr;
  i.sr = h.layout->sr;
  i.scale_format = h.scale_format;
  i.isa = h.layout->isa.to_string();
  i.payload_bytes = h.payload_bytes;
  i.total_bytes = impl_->buf.size();
  return i;
}

PackedWeights PackedWeights::repack(std::string_view target) const {
  const PackedBuffer& b = impl_->buf;
  const WeightProblem& p = b.header.problem;
  std::vector<int8_t> q(size_t(p.n) * p.k), z(p.has_zeros ? size_t(p.n) * p.groups() : 0);
  std::vector<float> s(size_t(p.n) * p.groups()), bias(p.has_bias ? size_t(p.n) : 0);
  unpack_payload(b.geo, b.payload(), q.data(), s.data(), p.has_zeros ? z.data() : nullptr,
                 p.has_bias ? bias.data() : nullptr);
  return wrap(pack_buffer(choose_layout(p, target), p, q.data(), s.data(),
                          p.has_zeros ? z.data() : nullptr, p.has_bias ? bias.data() : nullptr));
}

void PackedWeights::linear(int m, const float* x, float* y, const LinearOptions& options) const {
  const CpuProfile* prof = with_env_checked([] { return &host_profile(); });
  RunContext ctx{&default_registry(), prof, &impl_->cache, nullptr, {}};
  run_linear(ctx, impl_->buf, m, x, y, options);
}

}  // namespace lowbit
