// The generic cost table: what the planner assumes when no tuning record applies. A kernel
// missing here still plans (select/tuning.cpp derives its cost from a sibling and says so);
// `lowbit tune` measures every kernel that runs on a machine.
#include "select/kernel_cost.h"

namespace lowbit {

KernelCost uniform_cost(float unpack, float dot, float call, float group, float group_row,
                        std::initializer_list<UarchFactor> prefers) {
  KernelCost c{};
  for (int b = 0; b <= kMaxBits; ++b) {
    c.unpack[b] = unpack;
    c.dot[b] = dot;
  }
  c.call = call;
  c.group = group;
  c.group_row = group_row;
  int i = 0;
  for (const UarchFactor& f : prefers)
    if (i < 4) c.prefers[i++] = f;
  return c;
}

namespace {

// A cost whose unpack and dot terms differ by bit width: the values for bits 1, 2, ... as
// listed, the last one for the widths past the list.
KernelCost per_bit_cost(std::initializer_list<float> unpack, std::initializer_list<float> dot, float call,
                        float group_row) {
  KernelCost c = uniform_cost(0.0f, 0.0f, call, 0.0f, group_row);
  auto fill = [](float* out, std::initializer_list<float> v) {
    int b = 1;
    for (float x : v) out[b++] = x;
    for (; b <= kMaxBits; ++b) out[b] = out[b - 1];
  };
  fill(c.unpack, unpack);
  fill(c.dot, dot);
  return c;
}

}  // namespace

const CostTable& generic_costs() {
  static const KernelCost kLut = per_bit_cost({0.0184f, 0.0232f, 0.0733f}, {0.0369f, 0.0463f, 0.147f}, 150.0f, 0.0f);
  static const CostTable t = {
      // name, {unpack, dot, call, group, group_row, uarch factors}
      {"qa8_qw_gemm_1x1c1__scalar", uniform_cost(8.0f, 2.0f, 50.0f)},
      {"qa8_qw_gemm_4x1c1__scalar", uniform_cost(8.0f, 2.0f, 50.0f)},
      // x86-64 (src/kernels/x86, docs/x86-kernels.md), cycles (of 3 GHz) per weight value on
      // Zen 3. AVX2: fitted to single-thread, L2-resident times (`lowbit regret --threads 1
      // --n 256 --k 2048 --all`). AVX-VNNI / AVX-512: scaled from AVX2 by the llvm-mca cycles
      // of one group step (scripts/x86_mca.sh), not measured: no such CPU here.
      {"qa8_qw_gemv_1x8c4__avx2", uniform_cost(0.0f, 0.045f, 150.0f, 0.0f, 0.30f)},
      {"qa8_qw_gemv_1x8c4_sums__avx2", uniform_cost(0.0f, 0.037f, 150.0f, 0.0f, 0.30f)},
      {"qa8_qw_gemv_1x8c4__avxvnni", uniform_cost(0.0f, 0.036f, 150.0f, 0.0f, 0.24f)},
      {"qa8_qw_gemv_1x8c4_sums__avxvnni", uniform_cost(0.0f, 0.030f, 150.0f, 0.0f, 0.24f)},
      {"qa8_qw_gemm_4x8c4__avx2", uniform_cost(0.02f, 0.030f, 300.0f, 0.0f, 0.30f)},
      {"qa8_qw_gemm_4x8c4__avxvnni", uniform_cost(0.018f, 0.022f, 300.0f, 0.0f, 0.25f)},
      // Table lookup (docs/lut-kernels.md), bits 1-3, group terms folded in at group 32. One
      // cost for the family: the GEMM's time per row (`lowbit bench --widths`, prefill, 1
      // thread) relative to qa8_qw_gemm_4x8c4__avx2's, times that kernel's cost in the Zen 3
      // record (zen3-dev.json); a third of it the index extraction (unpack, once per LHS block:
      // shared by the GEMM's 4 rows, paid per row by the GEMV, measured 1.0-1.4x slower per row
      // at m = 128).
      {"qa8_qw_lut_gemv_1x32__avx2", kLut},
      {"qa8_qw_lut_gemm_4x32__avx2", kLut},
      // Not measured (no AVX-512 CPU here): the AVX2 numbers, though a zmm lookup covers twice
      // the columns; pessimistic, so the dot-product kernels keep AVX-512 machines until a
      // record says otherwise.
      {"qa8_qw_lut_gemv_1x64__avx512", kLut},
      {"qa8_qw_lut_gemm_4x64__avx512", kLut},
      {"qa8_qw_gemv_1x16c4__avx512vnni", uniform_cost(0.0f, 0.020f, 150.0f, 0.0f, 0.12f)},
      // The GFNI GEMV: the one above times their measured ratio per width (Zen 5, one thread,
      // 1024 x 2048 from L2, `lowbit regret --all`): 0.76 0.87 0.95 0.96 0.97 0.98 1.02 1.04.
      {"qa8_qw_gemv_1x16c4__avx512vnnigfni",
       per_bit_cost({0.0f}, {0.0151f, 0.0173f, 0.0190f, 0.0191f, 0.0194f, 0.0196f, 0.0204f, 0.0208f}, 150.0f, 0.12f)},
      // Its unpacking (paid once per 8-row block) is set so that one row costs as much as the
      // GEMV's, as designed (docs/x86-kernels.md: the tile is for m >= 2); 8 rows as scaled.
      // Zen 4 (AVX-512 on 256-bit units): measured against these costs (1024 x 2048, L2, one
      // thread, bits 1..8), both GEMVs take 1.24-1.43x what this GEMM takes at 1, 2, 3 and 5
      // bits (its 3 rows looked cheaper than the GEMM's 4-row code, 1.35x faster at 1 bit),
      // 0.82-1.07x at 4, 6, 7, 8; 0.8 keeps the 8-bit GEMV its m = 1.
      {"qa8_qw_gemm_8x16c4__avx512vnni",
       uniform_cost(0.012f, 0.0095f, 300.0f, 0.0f, 0.08f, {{Uarch::zen4, 0.8f}})},
      // aarch64: llvm-mca-19 on the group-32 loop, Neoverse N2 as reference, factors for other
      // cores from the same models (docs/arm-kernels.md, scripts/arm_mca.sh).
      {"qa8_qw_gemv_1x8c1__neon",
       uniform_cost(0.125f, 0.198f, 100.0f, 0.0f, 0.0f,
                    {{Uarch::cortex_a53, 3.24f}, {Uarch::cortex_a55, 2.49f}, {Uarch::cortex_a510, 1.97f},
                     {Uarch::neoverse_n1, 1.05f}})},
      {"qa8_qw_gemm_4x8c1__neon",
       uniform_cost(0.125f, 0.227f, 200.0f, 0.0f, 0.0f,
                    {{Uarch::cortex_a53, 1.83f}, {Uarch::cortex_a55, 1.73f}, {Uarch::cortex_a510, 0.97f},
                     {Uarch::neoverse_n1, 1.03f}})},
      // The out-of-order and the _a55 (in-order) variants: base costs in the ratio of their
      // 4-bit group loops' cycles on the big-core models (mean of Neoverse N2 and N1, with and
      // without the scvtf sensitivity: GEMV 41.05 vs 44.35 cycles, GEMM 50.9 vs 51.15), and on
      // Cortex-A55 its cycles over that mean (GEMV 136 vs 103, GEMM 158 vs 120), so the planner
      // runs each variant on the cores it is scheduled for.
      {"qa8_qw_gemv_1x16c4__dotprod",
       uniform_cost(0.031f, 0.047f, 100.0f, 0.0f, 0.0f, {{Uarch::cortex_a55, 3.31f}})},
      {"qa8_qw_gemv_1x16c4__dotprod_a55",
       uniform_cost(0.031f, 0.0508f, 100.0f, 0.0f, 0.0f, {{Uarch::cortex_a55, 2.32f}})},
      {"qa8_qw_gemm_8x8c4__dotprod",
       uniform_cost(0.031f, 0.044f, 200.0f, 0.0f, 0.0f, {{Uarch::cortex_a55, 3.10f}})},
      {"qa8_qw_gemm_8x8c4__dotprod_a55",
       uniform_cost(0.031f, 0.0442f, 200.0f, 0.0f, 0.0f, {{Uarch::cortex_a55, 2.35f}})},
      {"qa8_qw_gemv_1x8c8__i8mm", uniform_cost(0.031f, 0.05f, 100.0f)},
      {"qa8_qw_gemm_8x8c8__i8mm", uniform_cost(0.031f, 0.03f, 200.0f)},
  };
  return t;
}

int generic_prefetch_bytes(const std::string& kernel, Uarch u) {
  struct UarchPrefetch {
    const char* kernel;
    Uarch uarch;
    int bytes;
  };
  // Zen 4 (stop 51, docs/x86-kernels.md "Zen 4 wants 256 B"): 14336 x 4096 from DRAM,
  // one thread, each width at 0-2048 B interleaved; the AVX-512 GEMV read fastest at 256 B at
  // every width (5 bits 1.49x, 7 bits 1.40x, 6 bits 1.31x, 4 bits 1.29x faster than at 2 KiB),
  // the AVX2 one at 512 B (4 bits 1.33x, 6 bits level).
  static const UarchPrefetch kTable[] = {
      {"qa8_qw_gemv_1x16c4__avx512vnni", Uarch::zen4, 256},
      {"qa8_qw_gemv_1x16c4__avx512vnnigfni", Uarch::zen4, 256},
      {"qa8_qw_gemv_1x8c4__avx2", Uarch::zen4, 512},
  };
  for (const UarchPrefetch& e : kTable)
    if (e.uarch == u && kernel == e.kernel) return e.bytes;
  return -1;
}

const KernelCost* find_cost(const CostTable& t, const std::string& name) {
  for (const NamedCost& e : t)
    if (e.name == name) return &e.cost;
  return nullptr;
}

double uarch_factor(const KernelCost& c, Uarch u) {
  for (const UarchFactor& f : c.prefers) {
    if (f.uarch == Uarch::unknown) break;
    if (f.uarch == u) return f.factor;
  }
  return 1.0;
}

}  // namespace lowbit
