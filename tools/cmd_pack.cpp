// `lowbit pack` and `lowbit inspect`.
#include <cstdio>
#include <random>

#include "args.h"
#include "commands.h"
#include "describe.h"
#include "lowbit/lowbit.hpp"
#include "npy.h"

namespace lowbit::cli {

namespace {

void print_info(const PackedInfo& i, const std::string& path, bool json) {
  if (json) {
    Json j;
    j.begin_object().field("file", path).field("valid", true);
    packed_info_json(j, i);
    j.end_object();
    std::printf("%s\n", j.str().c_str());
    return;
  }
  std::printf("%s: valid lowbit packed weights (checksums verified)\n", path.c_str());
  print_table({{"field", "value"},
               {"layout", i.layout + " (id " + std::to_string(i.layout_id) + ")"},
               {"shape n x k", std::to_string(i.n) + " x " + std::to_string(i.k)},
               {"bits", std::to_string(i.bits)},
               {"group size", std::to_string(i.group_size)},
               {"zero points", i.has_zeros ? "yes" : "no"},
               {"bias", i.has_bias ? "yes" : "no"},
               {"nr / kr / sr", std::to_string(i.nr) + " / " + std::to_string(i.kr) + " / " + std::to_string(i.sr)},
               {"scales", i.scale_format == ScaleFormat::bf16 ? "bf16" : "f32"},
               {"packed for ISA", i.isa},
               {"payload bytes", std::to_string(i.payload_bytes)},
               {"file bytes", std::to_string(i.total_bytes)}});
}

}  // namespace

int cmd_pack(int argc, char** argv) {
  const Args args(argc, argv, {"zeros", "bias", "json"},
                  {"n", "k", "bits", "group", "target", "in", "seed", "out"});
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional()[0] + "'");
  if (!args.has("out")) throw UsageError("missing --out FILE");
  const int bits = int(args.integer("bits", 1, 8));
  const int group = int(args.integer("group", 16, 1 << 20));
  std::vector<float> w;
  int n, k;
  if (args.has("in")) {
    NpyMatrix mat = read_npy_f32(args.str("in"));
    n = mat.rows;
    k = mat.cols;
    if (args.has("n") && args.integer("n", 1, 1 << 30) != n) throw UsageError("--n disagrees with the .npy shape");
    if (args.has("k") && args.integer("k", 1, 1 << 30) != k) throw UsageError("--k disagrees with the .npy shape");
    w = std::move(mat.data);
  } else {
    n = int(args.integer("n", 1, 1 << 30));
    k = int(args.integer("k", 1, 1 << 30));
    if (int64_t(n) * k >= (int64_t{1} << 31)) throw UsageError("n*k must be < 2^31");
    std::mt19937 rng(uint32_t(args.integer("seed", 0, 1L << 31, 1)));
    std::normal_distribution<float> d(0.0f, 0.02f);
    w.resize(size_t(n) * k);
    for (float& v : w) v = d(rng);
  }
  const QuantizedWeights q = quantize_weights(w.data(), n, k, bits, group, args.flag("zeros"), ScaleFormat::bf16);
  std::vector<float> bias;
  if (args.flag("bias")) bias.assign(size_t(n), 0.01f);
  const PackedWeights pw = PackedWeights::pack(q, bias.empty() ? nullptr : bias.data(), args.str("target"));
  pw.save(args.str("out"));
  print_info(pw.info(), args.str("out"), args.flag("json"));
  return 0;
}

int cmd_inspect(int argc, char** argv) {
  const Args args(argc, argv, {"json"}, {});
  if (args.positional().size() != 1) throw UsageError("inspect takes one FILE");
  const std::string path = args.positional()[0];
  try {
    print_info(PackedWeights::load(path).info(), path, args.flag("json"));
  } catch (const Error& e) {
    if (args.flag("json")) {
      Json j;
      j.begin_object().field("file", path).field("valid", false).field("status", status_name(e.status()))
          .field("error", e.what()).end_object();
      std::printf("%s\n", j.str().c_str());
    }
    std::fprintf(stderr, "lowbit inspect: %s: %s\n", status_name(e.status()), e.what());
    return 1;
  }
  return 0;
}

}  // namespace lowbit::cli
