// `lowbit bench --widths`: every weight width side by side in one run (issue: every width at
// the speed of its bytes). Decode from DRAM (m = 1, 14336 x 4096 by default, rotating over
// copies of the weights totalling well over the last-level cache) against a plain streaming read
// of the same bytes in the same rotation at the same thread count, and prefill (m = 128,
// 4096 x 4096), at each thread count; the widths are interleaved rep by rep so they share the
// machine's noise. With --decode-kernel A,B (and/or --prefill-kernel A,B), each named kernel is a
// contender with its weights packed in its own layout, all of them interleaved in the same reps.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "args.h"
#include "baselines.h"
#include "commands.h"
#include "describe.h"
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

// Weights of one width, packed `copies` times (separately allocated), so that a rotation over
// them reads from DRAM.
struct WidthCase {
  int bits;
  size_t contender;
  std::vector<PackedWeights> copies;
  double read_bytes;  // what a decode GEMV must read per call: the records, not column sums
  std::vector<std::vector<uint64_t>> plain;  // read_bytes each, for the streaming read
};

// Bytes of the records of all panels (planes, scales, zero points): what a streaming GEMV
// reads. The column sums and the bias are not counted.
double record_bytes(const PackedWeights& w) {
  const PackedGeometry& g = w.impl().buf.geo;
  return double(g.panels) * double(g.groups) * double(g.record_bytes);
}

// Per rep, every contender once (A B C ... A B C ...); each contender's call `r` may use
// copy r % copies. First `warm` untimed rounds, so that every copy has been read before it is
// timed: a model reads each layer every token, and on a VM a page left alone for seconds (here,
// while the other copies were packed) can read at a fifth of the DRAM rate the first time
// (docs/x86-kernels.md, "Measuring on a VM"). Returns the medians.
std::vector<double> rotate_interleaved(const std::vector<std::function<void(int)>>& fns, int reps, int warm = 1) {
  std::vector<std::vector<double>> t(fns.size());
  for (int r = 0; r < warm; ++r)
    for (const auto& f : fns) f(r);
  for (int r = warm; r < warm + reps; ++r)
    for (size_t i = 0; i < fns.size(); ++i) {
      const double t0 = now_ns();
      fns[i](r);
      t[i].push_back(now_ns() - t0);
    }
  std::vector<double> out;
  for (auto& v : t) out.push_back(median(v));
  return out;
}

// "A,B" as {"A", "B"}; "" as {""} (no kernel named: the planner's choice).
std::vector<std::string> names(const std::string& list) {
  std::vector<std::string> out;
  size_t at = 0;
  for (size_t comma; (comma = list.find(',', at)) != std::string::npos; at = comma + 1) out.push_back(list.substr(at, comma - at));
  out.push_back(list.substr(at));
  return out;
}

// The kernel named `name` (nullptr for none: the planner's choice).
const KernelDesc* named_kernel(const std::string& name) {
  if (name.empty()) return nullptr;
  const KernelDesc* kd = default_registry().kernel(name);
  if (kd == nullptr) throw UsageError("no kernel named '" + name + "' (lowbit info lists them)");
  return kd;
}

// Random weights of one width, packed in `kernel`'s layout, else for this CPU.
PackedWeights pack_for(const std::string& kernel, const Workload& w, int n, int k, int bits) {
  const KernelDesc* kd = named_kernel(kernel);
  if (kd == nullptr) return PackedWeights::pack(n, k, bits, 32, w.q.data(), w.scales.data(), nullptr, nullptr);
  const PackedBuffer b = pack_buffer(*default_registry().layout(kd->layout_id), {n, k, bits, 32, false, false},
                                     w.q.data(), w.scales.data(), nullptr, nullptr);
  return PackedWeights::from_buffer(b.data(), b.size());
}

// The planner's plan for m rows, or (kernel non-empty) the same tiling run by `kernel` alone.
ExecPlan plan_for(const PackedWeights& w, int m, int threads, const std::string& kernel) {
  ExecPlan plan = call_plan(default_registry(), host_profile(), w.impl().buf.header, m, threads);
  const KernelDesc* kd = named_kernel(kernel);
  if (kd == nullptr) return plan;
  const PackedHeader& h = w.impl().buf.header;
  const std::string why = kernel_rejection(*kd, *h.layout, h.problem, host_profile().isa);
  if (!why.empty()) fail(Status::unsupported, "--kernel ", kernel, ": ", why);
  const uint32_t prefetch = active_tuning()->prefetch_distance(default_registry(), *kd, host_profile()).bytes;
  for (int u = 0; u < plan.num_uarchs; ++u) {
    plan.per_uarch[u].num_segments = 1;
    plan.per_uarch[u].seg[0] = {kd, 0, m, prefetch};
  }
  if (plan.row_tile % kd->mr != 0) plan.row_tile = (m + kd->mr - 1) / kd->mr * kd->mr;
  return plan;
}

}  // namespace

int bench_widths(const Args& args) {
  const bool json = args.flag("json"), quick = args.flag("quick");
  const int all = int(host_profile().num_threads());
  const std::vector<long> bits_list = args.integers("bits", 1, 8, {1, 2, 3, 4, 5, 6, 7, 8});
  const std::vector<long> threads_list =
      args.integers("threads", 1, 1024, all > 1 ? std::vector<long>{1, all} : std::vector<long>{1});
  const int reps = int(args.integer("reps", 3, 10000, quick ? 5 : 21));
  const int n = int(args.integer("n", 16, 1 << 20, quick ? 2048 : 14336));
  const int k = int(args.integer("k", 32, 1 << 20, quick ? 1024 : 4096));
  const int pn = quick ? 512 : 4096, pk = quick ? 512 : 4096, pm = quick ? 16 : 128;
  const std::string which = args.str("case", "all");
  if (which != "all" && which != "decode" && which != "prefill")
    throw UsageError("--case must be decode, prefill or all (got '" + which + "')");
  const bool do_decode = which != "prefill", do_prefill = which != "decode";
  // Contender i runs decode_kernels[i] and prefill_kernels[i] (a list of one goes with all).
  const std::vector<std::string> decode_kernels = names(args.str("decode-kernel"));
  const std::vector<std::string> prefill_kernels = names(args.str("prefill-kernel"));
  if (decode_kernels.size() > 1 && prefill_kernels.size() > 1 && decode_kernels.size() != prefill_kernels.size())
    throw UsageError("--decode-kernel and --prefill-kernel name different numbers of kernels");
  const size_t contenders = std::max(decode_kernels.size(), prefill_kernels.size());
  auto decode_kernel = [&](size_t i) { return decode_kernels[decode_kernels.size() > 1 ? i : 0]; };
  auto prefill_kernel = [&](size_t i) { return prefill_kernels[prefill_kernels.size() > 1 ? i : 0]; };
  // At least 160 MiB per width in the rotation, at least 3 copies: 5x a 32 MiB L3.
  const double cold_bytes = quick ? 8e6 : 160.0 * 1024 * 1024;

  // A named kernel without this width: that contender skips the width (said below the table).
  auto lacks = [](const std::string& kernel, long b) {
    const KernelDesc* kd = named_kernel(kernel);
    return kd != nullptr && !(kd->bits_mask & (1u << b));
  };
  std::vector<std::string> skipped;
  std::vector<WidthCase> cases;  // per width, per contender
  std::vector<PackedWeights> prefill_w;
  for (long b : bits_list) {
    const Workload wd = do_decode ? make_workload({n, k, int(b), 32, false, false}, 1, 100 + uint64_t(b)) : Workload{};
    const Workload wp = do_prefill ? make_workload({pn, pk, int(b), 32, false, false}, 1, 200 + uint64_t(b)) : Workload{};
    for (size_t ci = 0; ci < contenders; ++ci) {
      std::string lacking;
      if (do_decode && lacks(decode_kernel(ci), b)) lacking = decode_kernel(ci);
      else if (do_prefill && lacks(prefill_kernel(ci), b)) lacking = prefill_kernel(ci);
      if (!lacking.empty()) {
        skipped.push_back(concat(lacking, " has no ", b, "-bit weights"));
        continue;
      }
      WidthCase c{int(b), ci, {}, 0, {}};
      if (do_decode) {
        PackedWeights first = pack_for(decode_kernel(ci), wd, n, k, int(b));
        c.read_bytes = record_bytes(first);
        const int copies = std::max(3, int(std::ceil(cold_bytes / c.read_bytes)));
        c.copies.push_back(std::move(first));
        for (int i = 1; i < copies; ++i) c.copies.push_back(pack_for(decode_kernel(ci), wd, n, k, int(b)));
        for (int i = 0; i < copies; ++i) c.plain.emplace_back(size_t(c.read_bytes) / 8, uint64_t(i + 1));
      }
      if (do_prefill) prefill_w.push_back(pack_for(prefill_kernel(ci), wp, pn, pk, int(b)));
      cases.push_back(std::move(c));
    }
  }
  if (cases.empty()) {
    std::string why;
    for (const std::string& w : skipped) why += (why.empty() ? "" : "; ") + w;
    throw UsageError("no contender takes any of the widths asked for (" + why + ")");
  }
  const std::vector<float> x1 = random_floats(size_t(std::max(k, pk)) * pm, 5, 1.0f);
  // The plain read: the fastest of the read loops on the largest width's rotation.
  ReadLoop read = nullptr;
  if (do_decode) {
    const WidthCase& big = cases.back();
    double best = 0;
    for (ReadLoop f : read_loops()) {
      std::vector<std::function<void(int)>> one = {[&](int r) {
        const std::vector<uint64_t>& p = big.plain[size_t(r) % big.plain.size()];
        f(p.data(), p.size());
      }};
      const double t = rotate_interleaved(one, 7, int(big.plain.size()))[0];
      if (read == nullptr || t < best) read = f, best = t;
    }
  }
  std::vector<float> y(size_t(std::max(n, pn)) * pm);
  volatile uint64_t sink = 0;

  struct Row {
    int bits = 0, threads = 0;
    size_t contender = 0;
    double decode_ns = 0, stream_ns = 0, prefill_ns = 0, read_bytes = 0;
    std::string decode_kernels, prefill_kernels;
  };
  std::vector<Row> rows;
  for (long t : threads_list) {
    ThreadPool* const pool = pool_for_threads(int(t));
    settle();
    std::vector<std::function<void(int)>> fns;
    std::vector<ExecPlan> decode_plans, prefill_plans;
    for (const WidthCase& c : cases)
      if (do_decode) decode_plans.push_back(plan_for(c.copies[0], 1, int(t), decode_kernel(c.contender)));
    for (size_t i = 0; i < prefill_w.size(); ++i)
      prefill_plans.push_back(plan_for(prefill_w[i], pm, int(t), prefill_kernel(cases[i].contender)));
    if (do_decode) {
      for (size_t i = 0; i < cases.size(); ++i)
        fns.push_back([&c = cases[i], &plan = decode_plans[i], pool, &x1, &y](int r) {
          const PackedWeights& w = c.copies[size_t(r) % c.copies.size()];
          execute_plan(plan, host_profile(), w.impl().buf, 1, x1.data(), y.data(), {}, pool, {});
        });
      // The plain read of the same bytes in the same rotation, the copy split in t shares.
      for (WidthCase& c : cases)
        fns.push_back([&c, &sink, read, pool, t](int r) {
          const std::vector<uint64_t>& p = c.plain[size_t(r) % c.plain.size()];
          const size_t share = (p.size() + size_t(t) - 1) / size_t(t);
          std::atomic<uint64_t> x{0};
          run_tasks(pool, size_t(t), [&](size_t i) {
            const size_t lo = std::min(p.size(), i * share);
            x.fetch_xor(read(p.data() + lo, std::min(share, p.size() - lo)), std::memory_order_relaxed);
          });
          sink = sink + x.load();
        });
    }
    size_t most_copies = 1;
    for (const WidthCase& c : cases) most_copies = std::max(most_copies, c.copies.size());
    const std::vector<double> d = fns.empty() ? std::vector<double>{} : rotate_interleaved(fns, reps, int(most_copies));
    std::vector<std::function<void(int)>> pf;
    if (do_prefill)
      for (size_t i = 0; i < prefill_w.size(); ++i)
        pf.push_back([&w = prefill_w[i], &plan = prefill_plans[i], pool, &x1, &y, pm](int) {
          execute_plan(plan, host_profile(), w.impl().buf, pm, x1.data(), y.data(), {}, pool, {});
        });
    const std::vector<double> p = pf.empty() ? std::vector<double>{} : rotate_interleaved(pf, std::max(3, reps / 3));
    for (size_t i = 0; i < cases.size(); ++i) {
      Row row;
      row.bits = cases[i].bits, row.threads = int(t), row.contender = cases[i].contender;
      if (do_decode) {
        row.decode_ns = d[i];
        row.stream_ns = d[cases.size() + i];
        row.read_bytes = cases[i].read_bytes;
        row.decode_kernels = plan_kernels_text(decode_plans[i]);
      }
      if (do_prefill) {
        row.prefill_ns = p[i];
        row.prefill_kernels = plan_kernels_text(prefill_plans[i]);
      }
      rows.push_back(row);
    }
  }
  // Ratios to the 4-bit row of the same thread count and contender, else (a kernel without 4
  // bits) of the first contender, when 4 bits ran.
  auto four = [&](const Row& r) -> const Row* {
    const Row* first = nullptr;
    for (const Row& o : rows)
      if (o.bits == 4 && o.threads == r.threads) {
        if (o.contender == r.contender) return &o;
        if (first == nullptr || o.contender < first->contender) first = &o;
      }
    return first;
  };
  auto gbps = [](const Row& r) { return r.read_bytes / r.decode_ns; };
  auto gops = [&](const Row& r) { return 2.0 * pm * pn * double(pk) / r.prefill_ns; };
  if (json) {
    Json j;
    j.begin_object().field("profile", host_profile().to_spec()).field("reps", reps)
        .field("decode", concat("m=1 ", n, "x", k, " g32 bf16 scales, rotating copies"))
        .field("prefill", concat("m=", pm, " ", pn, "x", pk, " g32"));
    j.key("rows").begin_array();
    for (const Row& r : rows) {
      const Row* f = four(r);
      j.begin_object().field("bits", r.bits).field("threads", r.threads);
      if (do_decode) {
        j.field("decode_us", r.decode_ns * 1e-3).field("weight_bytes", r.read_bytes).field("decode_gbps", gbps(r))
            .field("decode_kernels", r.decode_kernels);
        j.field("stream_us", r.stream_ns * 1e-3).field("stream_gbps", r.read_bytes / r.stream_ns)
            .field("of_stream", r.stream_ns / r.decode_ns);
        if (f) j.field("gbps_of_4bit", gbps(r) / gbps(*f));
      }
      if (do_prefill) {
        j.field("prefill_us", r.prefill_ns * 1e-3).field("prefill_gops", gops(r)).field("prefill_kernels", r.prefill_kernels);
        if (f) j.field("gops_of_4bit", gops(r) / gops(*f));
      }
      j.end_object();
    }
    j.end_array();
    j.key("skipped").begin_array();
    for (const std::string& why : skipped) j.value(why);
    j.end_array().end_object();
    std::printf("%s\n", j.str().c_str());
    return 0;
  }
  std::printf("lowbit bench --widths: medians of %d interleaved reps (prefill %d); group 32, bf16-exact scales\n"
              "decode: m=1 %dx%d from DRAM (rotating copies); prefill: m=%d %dx%d\n%s\n",
              reps, std::max(3, reps / 3), n, k, pm, pn, pk, profile_text(host_profile()).c_str());
  std::vector<std::vector<std::string>> table = {{"bits", "T", "decode us", "GB/s", "of 4-bit", "of stream",
                                                  "prefill us", "Gop/s", "of 4-bit", "decode / prefill kernels"}};
  for (const Row& r : rows) {
    const Row* f = four(r);
    table.push_back({std::to_string(r.bits), std::to_string(r.threads),
                     do_decode ? fmt(r.decode_ns * 1e-3, 1) : "", do_decode ? fmt(gbps(r), 1) : "",
                     do_decode && f ? fmt(gbps(r) / gbps(*f), 2) : "",
                     do_decode ? fmt(r.stream_ns / r.decode_ns, 2) : "",
                     do_prefill ? fmt(r.prefill_ns * 1e-3, 1) : "", do_prefill ? fmt(gops(r), 1) : "",
                     do_prefill && f ? fmt(gops(r) / gops(*f), 2) : "",
                     r.decode_kernels + (do_decode && do_prefill ? " / " : "") + r.prefill_kernels});
  }
  print_table(table);
  for (const std::string& why : skipped) std::printf("skipped: %s\n", why.c_str());
  std::printf("\nGB/s: the records a decode GEMV reads (planes, scales; not the column sums) per second.\n"
              "of stream: time of a plain read of the same bytes, same rotation, same threads (each a share), / decode time.\n");
  // The memory's own scaling with threads, which bounds the decode's (the first width's rotation).
  if (do_decode && !rows.empty()) {
    std::string line = "plain read of the " + std::to_string(rows[0].bits) + "-bit rotation:";
    for (const Row& r : rows)
      if (r.bits == rows[0].bits && r.contender == rows[0].contender)
        line += concat(" ", r.threads, "T ", fmt(r.read_bytes / r.stream_ns, 1), " GB/s (",
                       fmt(rows[0].stream_ns / r.stream_ns, 2), "x of ", rows[0].threads, "T);");
    line.back() = '\n';
    std::printf("%s", line.c_str());
  }
  return 0;
}

}  // namespace lowbit::cli
