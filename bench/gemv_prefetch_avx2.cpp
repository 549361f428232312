// The GEMV's software-prefetch distance and panels-at-a-time, measured (docs/x86-kernels.md):
// the AVX2 GEMV (gemv.h) instantiated with several (NP, PF), timed in interleaved rounds on
// 4-bit g32 weights streaming from DRAM (rotating copies > 96 MiB) and from L3 (one copy),
// next to a plain streaming read of the same records. The AVX-512 GEMV has the same memory
// access pattern (NP streams, one 64-byte line per load), so the distance chosen here is
// the one it uses too.
//
// Two plain reads frame them: every byte of the payload in one pass, and the records alone,
// panel by panel, as the GEMV reads them. --layout packs for another layout of 8 columns x 4 k
// (x86_avx2_n8k4s32: no column sums) (docs/x86-kernels.md, "Decode from DRAM").
//
//   bench_gemv_prefetch [--rounds R] [--n N] [--k K] [--layout NAME]   (an AVX2 CPU; bench build)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ceilings.h"
#include "format/layouts.h"
#include "format/packed_weights.h"
#include "kernels/x86/avx2/traits.h"
#include "kernels/x86/gemv.h"
#include "ops/lhs_pack.h"
#include "util/aligned.h"

namespace lowbit::bench {
namespace {

using Fn = void (*)(const GemmShape&, const UKernelArgs&);
struct Variant {
  const char* name;
  Fn fn;
  uint32_t prefetch_bytes;  // UKernelArgs::prefetch_bytes
};
template <int NP>
void gemv_variant(const GemmShape& s, const UKernelArgs& a) {
  x86::gemv<x86::Avx2, NP, x86::OffsetTerm::kPairProduct>(s, a);
}

const Variant kVariants[] = {
    {"NP=1 no prefetch", gemv_variant<1>, 0},   {"NP=1 PF=512", gemv_variant<1>, 512},
    {"NP=1 PF=1024", gemv_variant<1>, 1024},    {"NP=1 PF=2048", gemv_variant<1>, 2048},
    {"NP=2 no prefetch", gemv_variant<2>, 0},   {"NP=2 PF=512", gemv_variant<2>, 512},
    {"NP=2 PF=1024", gemv_variant<2>, 1024},    {"NP=2 PF=2048", gemv_variant<2>, 2048},
    {"NP=2 PF=4096", gemv_variant<2>, 4096},    {"NP=4 no prefetch", gemv_variant<4>, 0},
    {"NP=4 PF=1024", gemv_variant<4>, 1024},    {"NP=4 PF=2048", gemv_variant<4>, 2048},
    {"NP=4 PF=4096", gemv_variant<4>, 4096},    {"NP=4 PF=8192", gemv_variant<4>, 8192},
    {"NP=8 PF=2048", gemv_variant<8>, 2048},
};

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

}  // namespace
}  // namespace lowbit::bench

int main(int argc, char** argv) {
  using namespace lowbit;
  using namespace lowbit::bench;
  int rounds = 15, n = 14336, k = 4096;
  const char* layout_name = "x86_avx2_n8k4s32_sums";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--n")) n = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--k")) k = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--layout")) layout_name = argv[i + 1];
  }
  const LayoutDesc* layout = find_layout(layout_name);
  if (layout == nullptr || layout->nr != 8 || layout->kr != 4) {
    std::fprintf(stderr, "bench_gemv_prefetch: --layout %s: not an x86 layout of 8 columns x 4 k\n", layout_name);
    return 2;
  }
  const WeightProblem p{n, k, 4, 32, false, false};
  std::mt19937 rng(7);
  std::vector<int8_t> q(size_t(n) * k);
  for (auto& v : q) v = int8_t(int(rng() % 16) - 8);
  std::vector<float> s(size_t(n) * (k / 32), 0.0078125f);
  const PackedBuffer w = pack_buffer(*layout, p, q.data(), s.data(), nullptr, nullptr);
  const size_t bytes = w.geo.payload_bytes;
  const size_t copies = (size_t(96) << 20) / bytes + 2;
  std::vector<AlignedBuffer> cold;
  for (size_t i = 0; i < copies; ++i) {
    cold.emplace_back(bytes);
    std::memcpy(cold.back().data(), w.payload(), bytes);
  }
  std::vector<float> x(static_cast<size_t>(k)), y(static_cast<size_t>(n));
  for (auto& v : x) v = float(int(rng() % 200) - 100) / 50.0f;
  const LhsFormat f{1, 4};
  AlignedBuffer lhs(lhs_block_layout(f, size_t(k), size_t(k / 32)).block_bytes);
  pack_lhs(f, 1, size_t(k), 32, x.data(), size_t(k), lhs.data());
  const GemmShape shape{&w.geo, k};
  auto call = [&](const Variant& v, const uint8_t* rhs) {
    UKernelArgs a{};
    a.prefetch_bytes = v.prefetch_bytes;
    a.m = 1;
    a.n = size_t(n);
    a.lhs = lhs.data();
    a.rhs = rhs;
    a.sums = w.geo.sum_block > 0 ? rhs + w.geo.sums_entry(0, 0, 0) : nullptr;
    a.y = y.data();
    a.y_stride = size_t(n);
    a.clamp_min = -1e30f;
    a.clamp_max = 1e30f;
    v.fn(shape, a);
  };
  const size_t nv = sizeof(kVariants) / sizeof(kVariants[0]);
  // [row][temp]: times per round; rows 0 and 1 are the plain reads (the payload; the records).
  std::vector<std::vector<double>> t[2];
  t[0].resize(nv + 2);
  t[1].resize(nv + 2);
  const size_t all_bytes = w.geo.payload_bytes / 4096 * 4096;
  const size_t record_bytes = w.geo.record_bytes * size_t(w.geo.groups) / 128 * 128;
  size_t next = 0;
  uint64_t sink = 0;
  for (int r = 0; r < rounds; ++r)
    for (int hot = 0; hot < 2; ++hot)
      for (size_t v = 0; v < nv + 2; ++v) {
        const int reps = hot ? 20 : int(copies);
        const double t0 = now();
        for (int i = 0; i < reps; ++i) {
          const uint8_t* rhs = hot ? w.payload() : cold[next++ % copies].data();
          if (v == 0) {
            sink += stream_avx2(rhs, all_bytes, 1);
          } else if (v == 1) {
            for (int pn = 0; pn < w.geo.panels; ++pn) sink += stream_avx2(rhs + size_t(pn) * w.geo.panel_bytes, record_bytes, 0);
          } else {
            call(kVariants[v - 2], rhs);
          }
        }
        t[hot][v].push_back((now() - t0) / reps);
      }
  const double useful = double(n) * k / 2 + double(n) * (k / 32) * 2;  // what the GEMV reads
  std::printf("# %dx%d 4-bit g32, %s, %d rounds, medians; GB/s of the %.1f MB of records (sums not read)\n",
              n, k, layout->name, rounds, useful / 1e6);
  std::printf("%-22s %12s %10s %12s %10s\n", "variant", "DRAM us", "GB/s", "L3 us", "GB/s");
  for (size_t v = 0; v < nv + 2; ++v) {
    double med[2];
    for (int hot = 0; hot < 2; ++hot) {
      std::vector<double> a = t[hot][v];
      std::nth_element(a.begin(), a.begin() + a.size() / 2, a.end());
      med[hot] = a[a.size() / 2];
    }
    const double b = v == 0 ? double(all_bytes) : v == 1 ? double(record_bytes) * w.geo.panels : useful;
    const char* name = v == 0 ? "read the payload" : v == 1 ? "read records only" : kVariants[v - 2].name;
    std::printf("%-22s %12.1f %10.1f %12.1f %10.1f\n", name,
                med[0] * 1e6, b / med[0] / 1e9, med[1] * 1e6, b / med[1] / 1e9);
  }
  return sink == 42 ? 1 : 0;
}
