#include "ops/linear.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

#include "cpu/current_core.h"
#include "format/layouts.h"
#include "ops/lhs_pack.h"
#include "ops/live_weights.h"
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

// One call as tasks: row tile x column tile, row-major over the grid. It holds copies of
// everything a task reads except the weights, which `owner_` keeps alive (when there is one),
// so a worker still late after the call returned reads nothing freed or reused under it: the
// plan's kernels and segments, the geometry, the packed activations (per job, not per thread:
// a job is prepared again only when idle()). Only the calling thread reads x: it packs the
// activations in the prologue, block by block, while the workers start on their tiles and
// wait for each block they reach (prefill, m = 128, 2 threads: the packing, ~0.3 ms of a
// 3.8 ms call, then overlaps the workers' tiles instead of holding them).
class LinearJob final : public TaskJob {
 public:
  void prepare(const ExecPlan& plan, const CpuProfile& profile, const PackedBuffer& w, int m,
               const float* x, float* y, const LinearOptions& opt, UarchSource uarch_source,
               std::shared_ptr<const void> owner);
  uint32_t num_tasks() const { return uint32_t(row_tiles_ * col_tiles_); }
  bool run(uint32_t t, float* scratch, bool rescue) override;
  size_t scratch_floats(uint32_t t) const override;
  void commit(uint32_t t, const float* scratch) override;
  void on_last_out() override { owner_.reset(); }
  void prologue() override;

 private:
  struct Tile {
    size_t r0, c0, rows, cols;
  };
  struct SegmentRun {
    UKernelFn fn;
    uint32_t prefetch_bytes;
    size_t mr, row_begin, rows;
    // Its packed activations: blocks of lhs_mr rows from row lhs_row_begin, the first one's
    // ready flag at packed_[lhs_first_block].
    size_t lhs_offset, lhs_block_bytes, lhs_mr, lhs_row_begin, lhs_first_block;
  };
  // One packing of the activations per distinct (format, rows) the per-uarch plans use.
  struct LhsRef {
    LhsFormat format;
    RowQuantizeFn quantize = quantize_row;
    LutTablesFn tables = lut_tables;
    int row_begin = 0, rows = 0;
    size_t offset = 0, block_bytes = 0, first_block = 0;
  };
  struct UarchRun {
    int num_segments = 0;
    SegmentRun seg[kMaxSegments];
  };
  // Until the prologue has packed block b of the activations (a task reaching it first).
  void wait_packed(size_t b) const;
  Tile tile(uint32_t t) const {
    const size_t r0 = t / col_tiles_ * row_tile_, c0 = t % col_tiles_ * col_tile_;
    return {r0, c0, std::min(row_tile_, m_ - r0), std::min(col_tile_, n_ - c0)};
  }

  UarchRun per_uarch_[kMaxUarchs];
  int num_uarchs_ = 1;
  PackedGeometry geo_;
  GemmShape shape_{};
  const uint8_t* payload_ = nullptr;
  const float* bias_ = nullptr;
  AlignedBuffer lhs_;
  LhsRef lhs_refs_[kMaxUarchs * kMaxSegments];
  int num_lhs_refs_ = 0;
  const float* x_ = nullptr;  // the caller's, until the prologue has packed it
  // packed_[b] == pack_epoch_: block b is packed in this call (a job is prepared only when
  // idle, so no thread reads these while prepare() sets them up).
  std::unique_ptr<std::atomic<uint32_t>[]> packed_;
  size_t packed_capacity_ = 0;
  uint32_t pack_epoch_ = 0;
  float* y_ = nullptr;
  size_t m_ = 0, n_ = 0, row_tile_ = 1, col_tile_ = 1, row_tiles_ = 0, col_tiles_ = 0;
  size_t rescue_cols_ = 1;  // a rescue checks whether it is still needed this often
  size_t l2_chunk_cols_ = 1;  // columns whose weights fit half of L2 (see run)
  float clamp_min_ = 0, clamp_max_ = 0;
  UarchSource uarch_source_;
  const CpuProfile* profile_ = nullptr;
  std::shared_ptr<const void> owner_;
};

void LinearJob::prepare(const ExecPlan& plan, const CpuProfile& profile, const PackedBuffer& w,
                        int m, const float* x, float* y, const LinearOptions& opt,
                        UarchSource uarch_source, std::shared_ptr<const void> owner) {
  geo_ = w.geo;
  const int k = geo_.groups * geo_.group_size;
  shape_ = GemmShape{&geo_, k};
  num_lhs_refs_ = 0;
  size_t total = 0, blocks = 0;
  num_uarchs_ = plan.num_uarchs;
  for (int u = 0; u < plan.num_uarchs; ++u) {
    per_uarch_[u].num_segments = plan.per_uarch[u].num_segments;
    for (int s = 0; s < plan.per_uarch[u].num_segments; ++s) {
      const Segment& seg = plan.per_uarch[u].seg[s];
      int i = 0;
      const LhsRef* refs = lhs_refs_;
      while (i < num_lhs_refs_ && !(refs[i].format == seg.kernel->lhs &&
                                    refs[i].row_begin == seg.row_begin && refs[i].rows == seg.rows))
        ++i;
      if (i == num_lhs_refs_) {
        LhsRef& r = lhs_refs_[num_lhs_refs_++];
        r = LhsRef{};  // a reused job's slot: nothing of the last call's (its quantizer)
        r.format = seg.kernel->lhs;
        // The ISA's quantizer (one the profile has: the plan's kernel requires it).
        if (seg.kernel->quantize != nullptr) r.quantize = seg.kernel->quantize;
        if (seg.kernel->tables != nullptr) r.tables = seg.kernel->tables;
        r.row_begin = seg.row_begin;
        r.rows = seg.rows;
        r.block_bytes = lhs_block_layout(r.format, size_t(k), size_t(geo_.groups)).block_bytes;
        r.offset = total;
        r.first_block = blocks;
        const size_t n_blocks = size_t((seg.rows + r.format.mr - 1) / r.format.mr);
        total += r.block_bytes * n_blocks;
        blocks += n_blocks;
      }
      per_uarch_[u].seg[s] = {seg.kernel->fn, seg.prefetch_bytes, size_t(seg.kernel->mr), size_t(seg.row_begin),
                              size_t(seg.rows), refs[i].offset, refs[i].block_bytes,
                              size_t(refs[i].format.mr), size_t(refs[i].row_begin),
                              refs[i].first_block};
    }
  }
  if (lhs_.size() < total) lhs_.resize(total);
  if (packed_capacity_ < blocks) {
    // () zeroes them (0: no epoch): without it a C++17 atomic is indeterminate, and reused
    // heap memory may hold this call's epoch.
    packed_.reset(new std::atomic<uint32_t>[blocks]());
    packed_capacity_ = blocks;
  }
  // An epoch rather than flags cleared per call: measured, clearing them here made 2-thread
  // decode (n = k = 4096) 3-6 % slower.
  if (++pack_epoch_ == 0) {  // wrapped: old flags could read as this call's
    for (size_t b = 0; b < packed_capacity_; ++b) packed_[b].store(0, std::memory_order_relaxed);
    pack_epoch_ = 1;
  }
  x_ = x;

  payload_ = w.payload();
  bias_ = geo_.has_bias ? reinterpret_cast<const float*>(payload_ + geo_.bias_offset) : nullptr;
  y_ = y;
  m_ = size_t(m);
  n_ = size_t(geo_.n);
  row_tile_ = size_t(plan.row_tile);
  col_tile_ = size_t(plan.col_tile);
  row_tiles_ = (m_ + row_tile_ - 1) / row_tile_;
  col_tiles_ = (n_ + col_tile_ - 1) / col_tile_;
  rescue_cols_ = std::max(size_t(geo_.nr), col_tile_ / 4 / size_t(geo_.nr) * size_t(geo_.nr));
  l2_chunk_cols_ = std::max(size_t(geo_.nr), profile.caches.l2 / 2 / (geo_.panel_footprint() / size_t(geo_.nr)) /
                                                 size_t(geo_.nr) * size_t(geo_.nr));
  clamp_min_ = opt.has_clamp ? opt.clamp_min : -std::numeric_limits<float>::infinity();
  clamp_max_ = opt.has_clamp ? opt.clamp_max : std::numeric_limits<float>::infinity();
  uarch_source_ = uarch_source;
  profile_ = &profile;
  owner_ = std::move(owner);
  const double tasks = double(num_tasks());
  expected_task_ns = plan.per_uarch[0].est_ns * std::min(double(plan.threads), tasks) / tasks;
}

void LinearJob::prologue() {
  const size_t k = size_t(geo_.groups) * size_t(geo_.group_size);
  for (int i = 0; i < num_lhs_refs_; ++i) {
    const LhsRef& r = lhs_refs_[i];
    const size_t mr = size_t(r.format.mr), rows = size_t(r.rows);
    for (size_t b = 0; b * mr < rows; ++b) {
      pack_lhs(r.format, std::min(mr, rows - b * mr), k, size_t(geo_.group_size),
               x_ + (size_t(r.row_begin) + b * mr) * k, k, lhs_.data() + r.offset + b * r.block_bytes,
               r.quantize, r.tables);
      packed_[r.first_block + b].store(pack_epoch_, std::memory_order_release);
    }
  }
  x_ = nullptr;
}

void LinearJob::wait_packed(size_t b) const {
  // The caller packs a block in microseconds; past that it may have lost its core, possibly
  // to this thread: give the core back between looks.
  for (uint32_t i = 1; packed_[b].load(std::memory_order_acquire) != pack_epoch_; ++i) {
    if (i % 1024 == 0)
      std::this_thread::yield();
    else
      cpu_relax();
  }
}

bool LinearJob::run(uint32_t t, float* scratch, bool rescue) {
  // Each task looks up the core it runs on (a rescue may run on another kind of core than the
  // task's first taker): tiles are whole tiles of every uarch's kernels.
  const uint32_t u = uarch_source_.fn ? uarch_source_.fn(uarch_source_.ctx)
                     : num_uarchs_ > 1 ? current_core_uarch_index(*profile_)
                                       : 0;
  const UarchRun& up = per_uarch_[u < uint32_t(num_uarchs_) ? u : 0];
  const Tile tl = tile(t);
  float* out = scratch ? scratch : y_ + tl.r0 * n_ + tl.c0;
  const size_t stride = scratch ? tl.cols : n_;
  // With several row blocks, columns go in chunks whose weights fit half of L2, each chunk
  // over every block: later blocks re-read it from L2, not L3 (Zen 3, m = 128: a 4096-column
  // tile re-read from L3 is 1.26x slower than 128-column chunks). A rescue also checks
  // between chunks whether it is still needed.
  size_t blocks = 0;
  for (int s = 0; s < up.num_segments; ++s) {
    const size_t lo = std::max(up.seg[s].row_begin, tl.r0);
    const size_t hi = std::min(up.seg[s].row_begin + up.seg[s].rows, tl.r0 + tl.rows);
    if (hi > lo) blocks += (hi - lo + up.seg[s].mr - 1) / up.seg[s].mr;
  }
  size_t step = blocks > 1 ? l2_chunk_cols_ : tl.cols;
  if (rescue) step = std::min(step, rescue_cols_);
  for (size_t c = 0; c < tl.cols; c += step) {
    if (rescue && committed(t)) return false;
    const size_t c0 = tl.c0 + c;
    for (int s = 0; s < up.num_segments; ++s) {
      const SegmentRun& seg = up.seg[s];
      const size_t lo = std::max(seg.row_begin, tl.r0);
      const size_t hi = std::min(seg.row_begin + seg.rows, tl.r0 + tl.rows);
      for (size_t row = lo; row < hi; row += seg.mr) {
        // The first chunk visits every block of the tile: later ones find them packed.
        if (c == 0) wait_packed(seg.lhs_first_block + (row - seg.lhs_row_begin) / seg.lhs_mr);
        UKernelArgs a;
        a.m = std::min(seg.mr, hi - row);
        a.n = std::min(step, tl.cols - c);
        a.lhs = lhs_.data() + seg.lhs_offset + (row - seg.lhs_row_begin) / seg.lhs_mr * seg.lhs_block_bytes;
        a.rhs = payload_ + c0 / size_t(geo_.nr) * geo_.panel_bytes;
        a.sums = geo_.sum_block > 0 ? payload_ + geo_.sums_entry(int(c0 / size_t(geo_.nr)), 0, 0) : nullptr;
        a.bias = bias_ ? bias_ + c0 : nullptr;
        a.y = out + (row - tl.r0) * stride + c;
        a.y_stride = stride;
        a.clamp_min = clamp_min_;
        a.clamp_max = clamp_max_;
        a.prefetch_bytes = seg.prefetch_bytes;
        seg.fn(shape_, a);
      }
    }
  }
  return true;
}

size_t LinearJob::scratch_floats(uint32_t t) const {
  const Tile tl = tile(t);
  return tl.rows * tl.cols;
}

void LinearJob::commit(uint32_t t, const float* scratch) {
  const Tile tl = tile(t);
  for (size_t r = 0; r < tl.rows; ++r)
    std::memcpy(y_ + (tl.r0 + r) * n_ + tl.c0, scratch + r * tl.cols, tl.cols * sizeof(float));
}

// This thread's jobs: one is prepared again once no late worker holds it any more. A worker
// holds one job at a time, so a thread never has more than 1 + (workers of every pool).
LinearJob& idle_job() {
  struct Jobs {
    std::vector<LinearJob*> jobs;
    ~Jobs() {
      for (LinearJob* j : jobs) TaskJob::release(j);  // a late worker deletes its job itself
    }
  };
  thread_local Jobs cache;
  for (LinearJob* j : cache.jobs)
    if (j->idle()) return *j;
  cache.jobs.reserve(cache.jobs.size() + 1);
  cache.jobs.push_back(new LinearJob);
  return *cache.jobs.back();
}

// A team's call: whoever enters first packs the activations (nobody is late past the return,
// so any team thread may read the caller's memory), then every thread takes tasks until none
// is left. The calling thread notes how long it worked.
struct TeamCall {
  LinearJob* job;
  uint32_t num_tasks;
  std::thread::id caller;
  std::atomic<bool> prologue_taken{false};
  std::atomic<uint32_t> next{0};
  uint64_t fork_ns = 0, caller_busy_ns = 0;

  static void body(void* arg) {
    TeamCall& c = *static_cast<TeamCall*>(arg);
    const uint64_t t0 = steady_now_ns();
    if (!c.prologue_taken.exchange(true, std::memory_order_relaxed)) c.job->prologue();
    for (uint32_t t; (t = c.next.fetch_add(1, std::memory_order_relaxed)) < c.num_tasks;)
      c.job->run(t, nullptr, false);
    if (std::this_thread::get_id() == c.caller) c.caller_busy_ns = steady_now_ns() - t0;
  }

  // The team was late: the calling thread waited for it, to start or to finish, longer than
  // half its own work (then the team no longer saved the caller anything) and more than 50 us
  // (a region's start and end on a busy team; a thread finishing its last task is not late) —
  // a thread of the team was asleep or descheduled, as on a busy machine. Measured on the
  // 2-vCPU VM: waits of 20-30 us on calls of 100-400 us, and of 2-8 ms on a thread's wake-up.
  bool late() const {
    const uint64_t waited = steady_now_ns() - fork_ns - caller_busy_ns;
    return waited > std::max<uint64_t>(50'000, caller_busy_ns / 2);
  }
};

// The calling thread's team (an OpenMP team belongs to the thread that opens its regions):
// calls it is left out of, and the current backoff. As ops/thread_pool.cpp's rule for a worker,
// except that only a run of calls in time halves the backoff, instead of one clearing it: a late
// team costs the caller a wait (a sleeping thread's wake-up: on the 2-vCPU VM up to 7 ms after
// a 150 ms pause), a late pool worker costs it nothing, so lateness that comes back after every
// pause must not be forgotten after one call in time.
struct TeamBackoff {
  int skip = 0, backoff = 0, in_time = 0;
};
constexpr int kMaxTeamBackoff = 64;
constexpr int kTeamCallsToHalve = 16;

void execute_on_team(LinearJob& job, const ForeignTeam& team) {
  thread_local TeamBackoff b;
  const uint32_t n = job.num_tasks();
  if (team.threads < 2 || n < 2 || b.skip > 0) {
    if (team.threads >= 2 && n >= 2) --b.skip;
    job.prologue();
    for (uint32_t t = 0; t < n; ++t) job.run(t, nullptr, false);
    return;
  }
  TeamCall c{&job, n, std::this_thread::get_id()};
  c.fork_ns = steady_now_ns();
  team.fork_join(team.ctx, &TeamCall::body, &c);
  if (!c.prologue_taken.load(std::memory_order_relaxed) || c.next.load(std::memory_order_relaxed) < n)
    fail(Status::internal, "the thread team returned before running the call's tasks");
  if (c.late()) {
    b.backoff = std::min(std::max(1, 2 * b.backoff), kMaxTeamBackoff);
    b.skip = b.backoff;
    b.in_time = 0;
  } else if (++b.in_time == kTeamCallsToHalve) {
    b.backoff /= 2;
    b.in_time = 0;
  }
}

}  // namespace

void execute_plan(const ExecPlan& plan, const CpuProfile& profile, const PackedBuffer& w, int m,
                  const float* x, float* y, const LinearOptions& opt, ThreadPool* pool,
                  UarchSource uarch_source, std::shared_ptr<const void> owner, const ForeignTeam* team) {
  LinearJob& job = idle_job();
  if (team) {
    job.prepare(plan, profile, w, m, x, y, opt, uarch_source, nullptr);
    execute_on_team(job, *team);
    return;
  }
  const bool owned = owner != nullptr;
  job.prepare(plan, profile, w, m, x, y, opt, uarch_source, pool ? std::move(owner) : nullptr);
  if (pool == nullptr) {
    job.prologue();
    for (uint32_t t = 0; t < job.num_tasks(); ++t) job.run(t, nullptr, false);
    return;
  }
  pool->run(job, job.num_tasks(), /*wait_for_workers=*/!owned);
}

void run_linear(const RunContext& ctx, const PackedBuffer& w, int m, const float* x, float* y,
                const LinearOptions& opt, std::shared_ptr<const void> owner) {
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
  if (ctx.team && (ctx.team->threads < 1 || ctx.team->threads > kMaxThreads))
    fail(Status::invalid_argument, "the team's thread count ", ctx.team->threads, " is outside [1, ", kMaxThreads, "]");
  ThreadPool* pool = ctx.pool;
  int threads = ctx.team ? ctx.team->threads
                : pool   ? pool->threads()
                         : (opt.num_threads > 0 ? opt.num_threads : int(ctx.profile->num_threads()));
  threads = std::max(threads, 1);
  if (pool == nullptr && ctx.team == nullptr) pool = pool_for_threads(threads);

  // planning_working_set is > 0 exactly when make_plan keys the plan as streamed.
  const uint64_t key = plan_key(m, threads, planning_working_set(*ctx.profile) > 0);
  const ExecPlan* plan = ctx.cache ? ctx.cache->find(key) : nullptr;
  ExecPlan fresh;
  if (plan == nullptr) {
    PlanExplanation ex;
    fresh = call_plan(*ctx.registry, *ctx.profile, w.header, m, threads, log_select() ? &ex : nullptr);
    if (log_select()) std::fprintf(stderr, "%s", format_plan(fresh, w.header, &ex).c_str());
    plan = ctx.cache ? ctx.cache->insert(fresh) : nullptr;
    if (plan == nullptr) plan = &fresh;
  }
  execute_plan(*plan, *ctx.profile, w, m, x, y, opt, pool, ctx.uarch_source, std::move(owner), ctx.team);
}

ExecPlan call_plan(const Registry& reg, const CpuProfile& prof, const PackedHeader& h, int m, int threads,
                   PlanExplanation* explain) {
  // A process whose packed weights outgrow L3 (a model) reads each layer's from DRAM, however
  // small the layer: plan it so.
  return make_plan(reg, prof, h, m, threads, explain, true, nullptr, planning_working_set(prof));
}

// ---- C++ API -------------------------------------------------------------------------------

void PackedWeights::Impl::make_view_lease() {
  // The last holder (this Impl, or a late worker) runs the deleter: everything the workers
  // read happened before it.
  view_lease_ = std::shared_ptr<const void>(
      this, [](Impl* impl) { impl->view_lease_released_.store(true, std::memory_order_release); });
}

PackedWeights::Impl::~Impl() {
  forget_live_weights(buf.data());
  if (!view_lease_) return;
  view_lease_.reset();
  while (!view_lease_released_.load(std::memory_order_acquire)) std::this_thread::yield();
}

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
  if (impl->buf.view) impl->make_view_lease();
  note_live_weights(impl->buf.data(), impl->buf.size());
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

void linear_keeping(const PackedWeights& w, std::shared_ptr<const void> bytes_owner, int m, const float* x,
                    float* y, const LinearOptions& options) {
  const CpuProfile* prof = with_env_checked([] { return &host_profile(); });
  RunContext ctx{&default_registry(), prof, &w.impl().cache, nullptr, {}};
  run_linear(ctx, w.impl().buf, m, x, y, options, std::move(bytes_owner));
}

void linear_on_team(const PackedWeights& w, int m, const float* x, float* y, const LinearOptions& options,
                    const ForeignTeam& team) {
  if (team.fork_join == nullptr) fail(Status::invalid_argument, "the team has no fork_join");
  const CpuProfile* prof = with_env_checked([] { return &host_profile(); });
  RunContext ctx{&default_registry(), prof, &w.impl().cache, nullptr, {}, &team};
  run_linear(ctx, w.impl().buf, m, x, y, options);
}

void PackedWeights::linear(int m, const float* x, float* y, const LinearOptions& options) const {
  // Workers still late when the call returns hold the weights (impl_), or a view's lease.
  linear_keeping(*this, impl_->view_lease() ? impl_->view_lease() : std::shared_ptr<const void>(impl_), m, x, y,
                 options);
}

}  // namespace lowbit
