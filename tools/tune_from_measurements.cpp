// `lowbit tune --from-measurements DIR --out FILE`: a tuning record for a CPU this machine is
// not, fitted to what this project's own tools measured there (the layout of
// /work/shared/measurements/<cpu>-<date>/: lowbit-info.json, cpu-flags.txt,
// single-thread/regret-*.json from `lowbit regret --threads 1 --all --json`, and
// regret-all.json from `lowbit regret --all --json`).
//
//   kernels  least squares over every measured plan option of the single-thread runs: the
//            planner's terms of the option (select/plan.h: plan_terms) against its time, one
//            intercept per run (activation packing, which the model leaves out); 4-bit only, so
//            the other bit widths keep the 4-bit terms
//   memory   the one-row options of the m = 1 cases: per-worker bandwidth as each kernel read,
//            L2 from the single-thread runs, L3 and DRAM from regret-all (2 threads); L3 is
//            where that bandwidth steps down
// Then both files are replayed: which option the planner picks with the generic numbers and
// with the record, and its measured time against the fastest.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "args.h"
#include "commands.h"
#include "describe.h"
#include "format/layouts.h"
#include "select/fit.h"
#include "select/plan.h"
#include "select/tuning.h"
#include "timing.h"
#include "tune_measure.h"
#include "util/error.h"
#include "util/json.h"

namespace lowbit::cli {

namespace {

constexpr double kCyclesPerNs = 3.0;

std::string read_file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(Status::io_error, "cannot open ", path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

const JsonValue& member(const JsonValue& v, const char* key, const std::string& where) {
  const JsonValue* m = v.get(key);
  if (m == nullptr) fail(Status::corrupt_data, where, ": no '", key, "'");
  return *m;
}

int int_member(const JsonValue& v, const char* key, const std::string& where) {
  const JsonValue& m = member(v, key, where);
  if (!m.is(JsonValue::Type::number) || m.number != std::floor(m.number) || m.number < 0 || m.number > 1e9)
    fail(Status::corrupt_data, where, ": '", key, "' is not a count");
  return int(m.number);
}

// One timed plan option of a regret run, as a plan of this build's registry.
struct Option {
  std::string name;
  ExecPlan plan;
  double cycles;
};
struct Case {
  std::string file;
  PackedHeader header;
  int m, threads;
  std::vector<Option> options;
};

// "k1 xR1 rows + k2 xR2 rows | tile RxC" -> a plan; false when a kernel is not in this build.
bool parse_option(const std::string& name, int m, int threads, ExecPlan* plan) {
  const size_t bar = name.find(" | tile ");
  if (bar == std::string::npos) return false;
  ExecPlan p;
  p.m = m;
  p.threads = threads;
  if (std::sscanf(name.c_str() + bar + 8, "%dx%d", &p.row_tile, &p.col_tile) != 2) return false;
  UarchPlan& up = p.per_uarch[0];
  std::string mix = name.substr(0, bar);
  int row = 0;
  while (!mix.empty() && up.num_segments < kMaxSegments) {
    const size_t plus = mix.find(" + ");
    const std::string seg = mix.substr(0, plus);
    mix = plus == std::string::npos ? "" : mix.substr(plus + 3);
    const size_t x = seg.rfind(" x");
    const KernelDesc* kd = x == std::string::npos ? nullptr : default_registry().kernel(seg.substr(0, x));
    if (kd == nullptr) return false;
    const int rows = std::atoi(seg.c_str() + x + 2);
    up.seg[up.num_segments++] = {kd, row, rows, kd->prefetch_bytes};
    row += rows;
  }
  if (row != m || !mix.empty()) return false;
  *plan = p;
  return true;
}

std::vector<Case> read_regret(const std::string& path) {
  const JsonValue doc = parse_json(read_file_text(path));
  const int threads = int_member(doc, "threads", path);
  const int bits = int_member(doc, "bits", path);
  const int group = int_member(doc, "group", path);
  std::vector<Case> out;
  for (const JsonValue& c : member(doc, "cases", path).items) {
    Case cs;
    cs.file = std::filesystem::path(path).filename().string();
    cs.m = int_member(c, "m", path);
    cs.threads = threads;
    cs.header.problem = {int_member(c, "n", path), int_member(c, "k", path), bits, group, false, false};
    cs.header.scale_format = ScaleFormat::bf16;  // regret's weights have bf16-exact scales
    for (const JsonValue& o : member(c, "options", path).items) {
      Option op;
      op.name = member(o, "name", path).string;
      if (!parse_option(op.name, cs.m, threads, &op.plan)) continue;
      op.cycles = member(o, "ms", path).number * 1e6 * kCyclesPerNs;
      cs.header.layout = default_registry().layout(op.plan.per_uarch[0].seg[0].kernel->layout_id);
      cs.options.push_back(op);
    }
    if (!cs.options.empty()) out.push_back(cs);
  }
  return out;
}

// The planner's pick among the measured options (by name), and its time over the fastest.
double replay_regret(const Case& c, const CpuProfile& prof, const Tuning& t, std::string* picked_name = nullptr,
                     std::string* best_name = nullptr) {
  const ExecPlan chosen = make_plan(default_registry(), prof, c.header, c.m, c.threads, nullptr, true, &t);
  double best = 1e300, picked = 0.0;
  for (const Option& o : c.options) {
    if (o.cycles < best) {
      best = o.cycles;
      if (best_name) *best_name = o.name;
    }
    if (same_plan(o.plan, chosen)) {
      picked = o.cycles;
      if (picked_name) *picked_name = o.name;
    }
  }
  return picked > 0 ? picked / best : std::nan("");
}

struct Summary {
  double geomean = 0, worst = 0;
  int cases = 0;
};
Summary summarize(const std::vector<Case>& cases, const CpuProfile& prof, const Tuning& t) {
  Summary s;
  double log_sum = 0;
  for (const Case& c : cases) {
    const double r = replay_regret(c, prof, t);
    if (std::isnan(r)) continue;
    log_sum += std::log(r);
    s.worst = std::max(s.worst, r);
    ++s.cases;
  }
  s.geomean = s.cases ? std::exp(log_sum / s.cases) : std::nan("");
  return s;
}

// Least squares over the measured plan options of single-thread runs: per kernel (call,
// unpack, dot, group, group_row, narrow for the given wide_cols), the per-task cost, and what
// the model leaves out of every plan alike — quantizing the m × k activations, and a constant
// per call; relative error.
struct OptionFit {
  std::vector<double> x;
  std::vector<double> worst;  // per kernel: worst relative error of an option using it
  std::vector<int> samples;
  double rms = 0.0;
  size_t rows = 0;
};
OptionFit fit_options(const std::vector<Case>& single, const std::vector<const KernelDesc*>& kernels,
                      const std::vector<int>& wide) {
  const size_t nk = kernels.size(), ncols = 6 * nk + 3;  // then tasks, activations, constant
  std::vector<std::vector<double>> a;
  std::vector<double> y, w;
  std::vector<std::vector<size_t>> uses;  // kernels of each row
  for (size_t ci = 0; ci < single.size(); ++ci) {
    const Case& c = single[ci];
    const PackedGeometry g = make_geometry(*c.header.layout, c.header.problem, c.header.scale_format);
    for (const Option& o : c.options) {
      std::vector<double> row(ncols, 0.0);
      row[ncols - 3] = std::ceil(double(c.m) / o.plan.row_tile) * std::ceil(double(g.n_padded) / o.plan.col_tile);
      row[ncols - 2] = double(c.m) * double(c.header.problem.k);
      row[ncols - 1] = 1.0;
      double fixed = 0.0;
      std::vector<size_t> used;
      for (const PlanTerms& t : plan_terms(o.plan, g, wide)) {
        const size_t j = size_t(std::find(kernels.begin(), kernels.end(), t.kernel) - kernels.begin());
        row[6 * j] += t.calls;
        row[6 * j + 1] += t.terms.unpack;
        row[6 * j + 2] += t.terms.dot;
        row[6 * j + 3] += t.terms.group;
        row[6 * j + 4] += t.terms.group_row;
        row[6 * j + 5] += t.narrow[j];
        fixed += t.lhs_bytes / 16.0;
        used.push_back(j);
      }
      a.push_back(row);
      y.push_back(o.cycles - fixed);
      w.push_back(1.0 / o.cycles);
      uses.push_back(used);
    }
  }
  OptionFit f;
  f.x = least_squares(a, y, w, std::vector<bool>(ncols, true));
  f.worst.assign(nk, 0.0);
  f.samples.assign(nk, 0);
  f.rows = a.size();
  double sq = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    double pred = 0;
    for (size_t j = 0; j < ncols; ++j) pred += a[i][j] * f.x[j];
    const double e = std::fabs(pred - y[i]) * w[i];
    sq += e * e;
    for (size_t j : uses[i]) {
      f.worst[j] = std::max(f.worst[j], e);
      ++f.samples[j];
    }
  }
  f.rms = std::sqrt(sq / double(std::max<size_t>(a.size(), 1)));
  return f;
}

CpuSignature signature(const std::string& dir, CpuProfile* prof) {
  const std::string info_path = dir + "/lowbit-info.json";
  const JsonValue info = parse_json(read_file_text(info_path));
  *prof = parse_profile_spec(member(member(info, "profile", info_path), "spec", info_path).string);
  CpuSignature s;
  s.arch = prof->arch;
  s.uarch = prof->main_uarch();
  s.isa = prof->isa;
  s.cores = int(prof->num_threads());
  std::ifstream flags(dir + "/cpu-flags.txt");
  for (std::string line; std::getline(flags, line);) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon), value = line.substr(colon + 1);
    while (!key.empty() && (key.back() == ' ' || key.back() == '\t')) key.pop_back();
    while (!value.empty() && value.front() == ' ') value.erase(0, 1);
    if (key == "vendor_id") s.id.vendor = value;
    if (key == "cpu family") s.id.family = uint32_t(std::atoi(value.c_str()));
    if (key == "model") s.id.model = uint32_t(std::atoi(value.c_str()));
    if (key == "stepping") s.id.stepping = uint32_t(std::atoi(value.c_str()));
  }
  return s;
}

}  // namespace

int tune_from_measurements(const std::string& dir, const std::string& out_path) {
  if (out_path.empty()) throw UsageError("--from-measurements needs --out FILE");
  CpuProfile prof;
  const CpuSignature sig = signature(dir, &prof);
  std::vector<Case> single, pair;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/single-thread"))
    if (e.path().extension() == ".json")
      for (Case& c : read_regret(e.path().string())) single.push_back(std::move(c));
  std::sort(single.begin(), single.end(), [](const Case& a, const Case& b) { return a.file < b.file; });
  pair = read_regret(dir + "/regret-all.json");
  progress(concat(single.size(), " single-thread runs, ", pair.size(), " cases of regret-all"));

  std::vector<const KernelDesc*> kernels;
  for (const Case& c : single)
    for (const Option& o : c.options)
      for (int i = 0; i < o.plan.per_uarch[0].num_segments; ++i)
        if (std::find(kernels.begin(), kernels.end(), o.plan.per_uarch[0].seg[i].kernel) == kernels.end())
          kernels.push_back(o.plan.per_uarch[0].seg[i].kernel);
  // The group of columns each kernel works through: each in turn takes the one of 2..16 panels
  // (or none) that fits best, twice over.
  std::vector<int> wide(kernels.size(), 0);
  OptionFit fit = fit_options(single, kernels, wide);
  for (int round = 0; round < 2; ++round)
    for (size_t j = 0; j < kernels.size(); ++j) {
      const int nr = default_registry().layout(kernels[j]->layout_id)->nr;
      for (int panels : {0, 2, 4, 8, 16}) {
        std::vector<int> trial = wide;
        trial[j] = panels * nr;
        OptionFit f = fit_options(single, kernels, trial);
        if (f.rms < fit.rms) {
          fit = std::move(f);
          wide = trial;
        }
      }
    }
  progress(concat("fitted ", fit.rows, " options, relative rms error ", fmt(fit.rms * 100, 1), " %; activation packing ",
                  fmt(fit.x[fit.x.size() - 2], 2), " cycles per value"));
  const std::vector<double>& x = fit.x;

  TuningRecord rec;
  for (size_t j = 0; j < kernels.size(); ++j) {
    KernelEntry e;
    e.name = kernels[j]->name;
    e.identity = default_registry().identity(*kernels[j]);
    e.cost = uniform_cost(float(x[6 * j + 1]), float(x[6 * j + 2]), float(x[6 * j]), float(x[6 * j + 3]),
                          float(x[6 * j + 4]));
    e.cost.narrow = x[6 * j + 5] > 0 ? float(x[6 * j + 5]) : 0.0f;
    e.cost.wide_cols = x[6 * j + 5] > 0 ? wide[j] : 0;
    e.cost = bounded_for_record(e.cost);
    e.fit_error = std::min(fit.worst[j], kMaxFitError);
    e.samples = fit.samples[j];
    rec.kernels.push_back(e);
  }

  // Memory: per-worker bytes/cycle of each one-row option at m = 1, best tiling per case, over
  // the time left once the fitted activation packing is taken out.
  const double act = fit.x[fit.x.size() - 2], constant = fit.x.back();
  std::map<std::string, std::vector<std::pair<double, double>>> by_kernel;  // (payload, bw) at 2 workers
  std::map<std::string, double> l2_bw;                                    // 1 worker, L2-resident
  for (const std::vector<Case>* set : {&single, &pair})
    for (const Case& c : *set) {
      if (c.m != 1) continue;
      const double payload = double(make_geometry(*c.header.layout, c.header.problem, c.header.scale_format).payload_bytes);
      std::map<std::string, double> best;
      for (const Option& o : c.options)
        if (o.plan.per_uarch[0].num_segments == 1) {
          const std::string k = o.plan.per_uarch[0].seg[0].kernel->name;
          const double kernel_cycles = o.cycles - act * c.header.problem.k - constant;
          if (kernel_cycles > 0.1 * o.cycles) best[k] = std::max(best[k], payload / (c.threads * kernel_cycles));
        }
      for (const auto& [k, bw] : best) {
        if (c.threads == 1) l2_bw[k] = std::max(l2_bw[k], bw);
        else by_kernel[k].push_back({payload, bw});
      }
    }
  // L3 ends where the GEMV's bandwidth drops most between two payloads: between the two.
  size_t l3 = 0;
  for (auto& [k, pts] : by_kernel) std::sort(pts.begin(), pts.end());
  for (const auto& [k, pts] : by_kernel) {
    if (default_registry().kernel(k)->mr != 1) continue;
    double steepest = 1.0;
    for (size_t i = 0; i + 1 < pts.size(); ++i)
      if (pts[i + 1].second / pts[i].second < steepest) {
        steepest = pts[i + 1].second / pts[i].second;
        l3 = size_t(std::sqrt(pts[i].first * pts[i + 1].first)) >> 20 << 20;
      }
  }
  rec.caches = {prof.caches.l1d, prof.caches.l2, l3};
  for (KernelEntry& e : rec.kernels) {
    if (!by_kernel.count(e.name)) continue;
    std::vector<double> in_l3, in_dram;
    for (const auto& [payload, bw] : by_kernel[e.name]) (payload <= double(l3) ? in_l3 : in_dram).push_back(bw);
    // Caches are per core: one worker reads as fast as each of two. DRAM is shared: the
    // generic model's rule (a second core adds a quarter) gives one worker's rate.
    if (l2_bw.count(e.name)) e.bandwidth.l2 = {l2_bw[e.name], l2_bw[e.name]};
    if (!in_l3.empty()) e.bandwidth.l3 = {median(in_l3), median(in_l3)};
    if (!in_dram.empty()) e.bandwidth.dram = {median(in_dram) * 2 / 1.25, median(in_dram)};
    for (auto [mine, all] : {std::pair{&e.bandwidth.l2, &rec.bandwidth.l2}, std::pair{&e.bandwidth.l3, &rec.bandwidth.l3},
                             std::pair{&e.bandwidth.dram, &rec.bandwidth.dram}}) {
      if (all->size() < mine->size()) all->resize(mine->size(), 0.0);
      for (size_t i = 0; i < mine->size(); ++i) (*all)[i] = std::max((*all)[i], (*mine)[i]);
    }
  }

  const std::string folder = std::filesystem::path(dir).filename().string();
  rec.name = folder.empty() ? std::filesystem::path(dir).parent_path().filename().string() : folder;
  rec.lowbit_version = library_version();
  rec.scope = "uarch";
  rec.cpu = sig;
  rec.registry = default_registry().fingerprint();
  rec.source = concat("lowbit tune --from-measurements ", rec.name, ": kernel terms fitted to ", fit.rows,
                      " plan options of ", single.size(), " single-thread runs (n=256 k=2048, 4-bit, groups 32 and 128; "
                      "other bit widths keep the 4-bit terms); L2/L3/DRAM bandwidth from the one-row options at m=1 "
                      "(1 thread: L2; regret-all, 2 threads: L3 and DRAM, L3 ending where the GEMV's drops most), over the "
                      "time left after the fitted activation packing; "
                      "caches L1d/L2 from lowbit-info.json; thread pool costs not measured (generic)");
  {
    const std::string text = record_to_json(rec);
    parse_record(text);  // what the lookup will accept
    std::ofstream f(out_path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) fail(Status::io_error, "cannot write ", out_path);
  }

  const Tuning generic;
  const Tuning fitted(std::make_shared<TuningRecord>(rec), "the new record");
  std::printf("lowbit tune --from-measurements %s -> %s\n", dir.c_str(), out_path.c_str());
  std::printf("caches: L2 %s, L3 %s\n\n", cache_size_to_string(rec.caches.l2).c_str(),
              cache_size_to_string(rec.caches.l3).c_str());
  std::vector<std::vector<std::string>> t = {{"kernel", "options", "unpack", "dot", "call", "group", "group_row",
                                              "L3 / DRAM bytes/cycle (2 workers)", "worst error"}};
  for (const KernelEntry& e : rec.kernels)
    t.push_back({e.name, std::to_string(e.samples), fmt(e.cost.unpack[4], 4), fmt(e.cost.dot[4], 4),
                 fmt(e.cost.call, 0), fmt(e.cost.group, 2), fmt(e.cost.group_row, 3),
                 (e.bandwidth.l3.size() > 1 ? fmt(e.bandwidth.l3[1], 1) : "-") + " / " +
                     (e.bandwidth.dram.size() > 1 ? fmt(e.bandwidth.dram[1], 1) : "-"),
                 fmt(e.fit_error * 100, 1) + " %"});
  print_table(t);
  std::printf("\nreplayed: the option the planner picks, its measured time / the fastest measured\n");
  std::vector<std::vector<std::string>> r = {{"measurements", "cases", "generic geomean", "worst", "record geomean", "worst"}};
  for (const auto& [label, set] : {std::pair{"single-thread", &single}, std::pair{"regret-all (2 threads)", &pair}}) {
    const Summary g = summarize(*set, prof, generic), f = summarize(*set, prof, fitted);
    r.push_back({label, std::to_string(f.cases), fmt(g.geomean, 3), fmt(g.worst, 3), fmt(f.geomean, 3), fmt(f.worst, 3)});
  }
  print_table(r);
  std::printf("\ncases the record still misses by more than 10 %%:\n");
  std::vector<std::vector<std::string>> miss = {{"run", "n x k", "m", "regret", "picked", "fastest"}};
  for (const std::vector<Case>* set : {&single, &pair})
    for (const Case& c : *set) {
      std::string picked, best;
      const double x = replay_regret(c, prof, fitted, &picked, &best);
      if (x > 1.10)
        miss.push_back({c.file, concat(c.header.problem.n, "x", c.header.problem.k), std::to_string(c.m), fmt(x, 3),
                        picked, best});
    }
  print_table(miss);
  return 0;
}

}  // namespace lowbit::cli
