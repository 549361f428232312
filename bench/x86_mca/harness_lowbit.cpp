// One call of a registered lowbit kernel, for scripts/x86_mca.sh to trace under gdb
// (trace_gdb.py): the kernel named on the command line runs once on one LHS block of m rows
// and n columns. Weights and activations are random; the kernel may be one this CPU lacks
// (the tracer steps over those instructions), so the output is not checked here.
//
//   harness_lowbit KERNEL M N K GROUP BITS ZEROS
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "format/packed_weights.h"
#include "ops/lhs_pack.h"
#include "registry/registry.h"
#include "util/aligned.h"

using namespace lowbit;

int main(int argc, char** argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s KERNEL M N K GROUP BITS ZEROS\n", argv[0]);
    return 2;
  }
  const KernelDesc* kd = default_registry().kernel(argv[1]);
  if (kd == nullptr || kd->fn == nullptr) {
    std::fprintf(stderr, "unknown kernel %s\n", argv[1]);
    return 2;
  }
  const int m = std::atoi(argv[2]), n = std::atoi(argv[3]), k = std::atoi(argv[4]);
  const WeightProblem p{n, k, std::atoi(argv[6]), std::atoi(argv[5]), std::atoi(argv[7]) != 0, false};
  std::mt19937 rng(1);
  std::vector<int8_t> q(size_t(n) * k), zeros(size_t(n) * p.groups());
  std::vector<float> scales(size_t(n) * p.groups(), 0.03125f), x(size_t(m) * k);
  for (auto& v : q) v = int8_t(int(rng() % (1u << p.bits)) - (1 << (p.bits - 1)));
  for (auto& v : zeros) v = int8_t(rng() % 16);
  for (auto& v : x) v = float(int(rng() % 200) - 100) / 50.0f;
  const PackedBuffer w = pack_buffer(*default_registry().layout(kd->layout_id), p, q.data(),
                                     scales.data(), p.has_zeros ? zeros.data() : nullptr, nullptr);
  const LhsBlockLayout l = lhs_block_layout(kd->lhs, size_t(k), size_t(p.groups()));
  AlignedBuffer lhs;
  lhs.resize(l.block_bytes);
  pack_lhs(kd->lhs, size_t(m), size_t(k), size_t(p.group_size), x.data(), size_t(k), lhs.data());
  std::vector<float> y(size_t(m) * n);
  const GemmShape shape{&w.geo, k};
  UKernelArgs a{};
  a.m = size_t(m);
  a.n = size_t(n);
  a.lhs = lhs.data();
  a.rhs = w.payload();
  a.sums = w.geo.sum_block > 0 ? w.payload() + w.geo.sums_entry(0, 0, 0) : nullptr;
  a.y = y.data();
  a.y_stride = size_t(n);
  a.clamp_min = -1e30f;
  a.clamp_max = 1e30f;
  a.prefetch_bytes = kd->prefetch_bytes;
  kd->fn(shape, a);
  std::printf("%s: y[0] = %g\n", kd->name, double(y[0]));
  return 0;
}
