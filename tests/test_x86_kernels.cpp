// x86 kernel tests beyond the registry suite:
//  * extreme values: every weight at its largest / smallest, activations at -128 / 127, zero
//    points at the ends of int8, long groups: the bounds of the exact int16 (AVX2) and uint8
//    (column sums) partial sums, which random data never reaches;
//  * the kernels this machine cannot execute (AVX-512 VNNI, AVX-VNNI), run through SIMDe
//    emulation (x86_emulated/: one generated TU per kernel, when libsimde-dev is installed),
//    with the registry's descriptors and the emulated function swapped in;
//  * the kernels' row quantizers (KernelDesc::quantize), natively or emulated the same way,
//    against the scalar definition, and their lookup-table builders (KernelDesc::tables)
//    against the baseline lut_tables.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "cpu/profile.h"
#include "format/packed_weights.h"
#include "kernels/x86/kernels.h"
#include "ops/lhs_pack.h"
#include "ops/linear.h"
#include "ops/thread_pool.h"
#if LOWBIT_HAVE_SIMDE
#include "x86_emulated/registry.h"
#endif
#include "registry/registry.h"
#include "test_util.h"
#include "util/error.h"

namespace lowbit {
#if LOWBIT_HAVE_SIMDE
std::vector<EmulatedFn>& emulated_kernels() {
  static std::vector<EmulatedFn> kernels;
  return kernels;
}
#endif

namespace {

// The registered kernel, or its emulated twin when this CPU cannot run it.
KernelDesc emulated(const char* name) {
  const KernelDesc* kd = default_registry().kernel(name);
  if (kd == nullptr) fail(Status::internal, "not registered: ", name);
  KernelDesc e = *kd;
  if (host_profile().isa.contains(kd->requires)) return e;
  e.fn = nullptr;
  e.quantize = nullptr;
  e.tables = nullptr;
#if LOWBIT_HAVE_SIMDE
  for (const EmulatedFn& em : emulated_kernels()) {
    if (em.fn != nullptr && std::string(name) == em.name) e.fn = em.fn;
    if (kd->quantize != nullptr && em.real_quantize == kd->quantize) e.quantize = em.quantize;
    if (kd->tables != nullptr && em.real_tables == kd->tables) e.tables = em.tables;
  }
  // A quantizer or table builder without a twin: the kernel is not run.
  if (kd->quantize != nullptr && e.quantize == nullptr) e.fn = nullptr;
  if (kd->tables != nullptr && e.tables == nullptr) e.fn = nullptr;
#endif
  return e;
}

std::vector<float> run(const KernelDesc& kd, const KernelDesc* tail, const PackedBuffer& b, int m,
                       const float* x, const ClampRange& range, int threads, int col_tile) {
  ExecPlan plan;
  plan.m = m;
  plan.threads = threads;
  UarchPlan& up = plan.per_uarch[0];
  const int full = m / kd.mr * kd.mr;
  if (tail != nullptr && full > 0 && full < m) {
    up.num_segments = 2;
    up.seg[0] = {&kd, 0, full, kd.prefetch_bytes};
    up.seg[1] = {tail, full, m - full, tail->prefetch_bytes};
  } else {
    up.num_segments = 1;
    up.seg[0] = {&kd, 0, m, kd.prefetch_bytes};
  }
  plan.row_tile = (m + kd.mr - 1) / kd.mr * kd.mr;
  plan.col_tile = col_tile;
  std::vector<float> got(size_t(m) * b.header.problem.n + 3, -7.0f);
  LinearOptions opt;
  opt.has_clamp = range.on;
  opt.clamp_min = range.lo;
  opt.clamp_max = range.hi;
  execute_plan(plan, host_profile(), b, m, x, got.data() + 3, opt, pool_for_threads(threads), {});
  got.erase(got.begin(), got.begin() + 3);
  return got;
}

void check(const KernelDesc& kd, const KernelDesc* tail, int bits, int group, int groups, int n,
           int m, bool zeros, bool bias, bool clamp, bool bf16, int threads) {
  bits = test::width_for(kd, bits);
  const LayoutDesc& layout = *default_registry().layout(kd.layout_id);
  const WeightProblem p{n, group * groups, bits, group, zeros, bias};
  const test::Weights w = test::random_weights(p, uint32_t(bits * 977 + group * 7 + m + n), bf16);
  const PackedBuffer b = pack_buffer(layout, p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
  test::Activations a = test::random_activations(m, p.k, uint32_t(m * 31 + bits), 1 + m % 3);
  if (m > 2) a.x[size_t(p.k) + 5] = std::numeric_limits<float>::infinity();  // row 1: NaN out
  const ClampRange range{clamp, -0.25f, 0.5f};
  const std::vector<float> want = test::reference(w, m, a.x, range);
  const std::vector<float> got = run(kd, tail, b, m, a.x, range, threads, layout.nr * (1 + n % 3));
  const float* y = got.data();
  ASSERT_TRUE(test::bits_equal(y, want.data(), want.size()))
      << kd.name << " bits=" << bits << " group=" << group << " groups=" << groups << " n=" << n
      << " m=" << m << " zeros=" << zeros << " bias=" << bias << " bf16=" << bf16 << ": "
      << test::first_difference(y, want.data(), want.size());
}

// All x86 kernels: those this CPU runs, natively; the others emulated (when SIMDe is there).
std::vector<const char*> x86_kernels() {
  std::vector<const char*> out;
  for (const KernelDesc& kd : default_registry().kernels()) {
    const LayoutDesc* l = default_registry().layout(kd.layout_id);
    if (l->arch == Arch::x86_64 && emulated(kd.name).fn != nullptr) out.push_back(kd.name);
  }
  return out;
}

class EmulatedKernel : public ::testing::TestWithParam<const char*> {};

TEST_P(EmulatedKernel, MatchesReferenceBitForBit) {
  const KernelDesc kd = emulated(GetParam());
  int i = 0;
  for (int bits = 1; bits <= 8; ++bits)
    for (int group : {16, 32, 48, 128, 256}) {
      ++i;
      const int n = int(default_registry().layout(kd.layout_id)->nr) * (1 + i % 3) + i % 7;
      check(kd, nullptr, bits, group, 1 + i % 3, n, 1 + (i * 3) % (2 * kd.mr + 1), i % 2 == 0,
            bits % 2 == 1, i % 3 == 0, i % 4 == 1, 1);
      if (HasFatalFailure()) return;
    }
}

TEST_P(EmulatedKernel, RowTailsAndMixes) {
  const KernelDesc kd = emulated(GetParam());
  std::vector<KernelDesc> tails;
  for (const KernelDesc* t : default_registry().kernels_for(kd.layout_id))
    if (t->mr < kd.mr && t->requires == kd.requires) tails.push_back(emulated(t->name));
  for (int m : {1, 2, 3, 4, 5, 7, 9, 13}) {
    check(kd, tails.empty() ? nullptr : &tails[0], 4, 32, 3, 41, m, true, true, true, false, 2);
    if (HasFatalFailure()) return;
    check(kd, nullptr, 8, 64, 2, 35, m, false, false, false, true, 1);
    if (HasFatalFailure()) return;
  }
}

// Weights all at one end of their range, activations all -128 or all 127 (x = -1 or +1
// quantizes to exactly that), zero points at -128 / 127, one long group and several short.
// Four panels and a partial fifth: the GEMVs' four-panels-at-a-time path and its tail.
TEST_P(EmulatedKernel, ExtremeValuesStayExact) {
  const KernelDesc kd = emulated(GetParam());
  const LayoutDesc& layout = *default_registry().layout(kd.layout_id);
  for (int bits = 1; bits <= 8; ++bits)
    for (int group : {4096, 256})
      for (int variant = 0; variant < 4; ++variant) {
        if (test::width_for(kd, bits) != bits) continue;  // a width the kernel lacks
        const int n = 4 * layout.nr + 3, k = 4096;
        const bool zeros = variant >= 2;
        const WeightProblem p{n, k, bits, group, zeros, false};
        test::Weights w = test::random_weights(p, uint32_t(bits + variant));
        const int qmax = (1 << (bits - 1)) - 1, qmin = -(1 << (bits - 1));
        for (size_t i = 0; i < w.q.size(); ++i) w.q[i] = int8_t(variant % 2 == 0 ? qmax : qmin);
        for (size_t i = 0; i < w.zeros.size(); ++i) w.zeros[i] = int8_t(variant == 2 ? -128 : 127);
        const PackedBuffer b = pack_buffer(layout, p, w.q.data(), w.scales.data(), w.zeros_ptr(), nullptr);
        const int m = 3;
        std::vector<float> x(size_t(m) * k);
        for (int i = 0; i < k; ++i) {
          x[i] = -1.0f;                               // qx = -128
          x[size_t(k) + i] = 1.0f;                    // qx = 127
          x[size_t(2) * k + i] = i % 2 ? 1.0f : -1.0f;  // alternating ends
        }
        const std::vector<float> want = test::reference(w, m, x.data());
        const std::vector<float> got = run(kd, nullptr, b, m, x.data(), ClampRange{}, 1, layout.nr);
        ASSERT_TRUE(test::bits_equal(got.data(), want.data(), want.size()))
            << kd.name << " bits=" << bits << " group=" << group << " variant=" << variant << ": "
            << test::first_difference(got.data(), want.data(), want.size());
      }
}

INSTANTIATE_TEST_SUITE_P(X86, EmulatedKernel, ::testing::ValuesIn(x86_kernels()),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// The kernels naming a row quantizer that runs here (natively or emulated), one per quantizer.
std::vector<const char*> x86_quantizers() {
  std::vector<const char*> out;
  std::vector<RowQuantizeFn> seen;
  for (const KernelDesc& kd : default_registry().kernels()) {
    if (kd.quantize == nullptr || emulated(kd.name).quantize == nullptr) continue;
    if (std::find(seen.begin(), seen.end(), kd.quantize) != seen.end()) continue;
    seen.push_back(kd.quantize);
    out.push_back(kd.name);
  }
  return out;
}

class KernelQuantizer : public ::testing::TestWithParam<const char*> {};

TEST_P(KernelQuantizer, MatchesScalarDefinitionBitForBit) {
  test::expect_quantizer_matches_scalar(emulated(GetParam()).quantize);
}

INSTANTIATE_TEST_SUITE_P(X86, KernelQuantizer, ::testing::ValuesIn(x86_quantizers()),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KernelQuantizer);

// The kernels naming a lookup-table builder that runs here (natively or emulated), one per
// builder.
std::vector<const char*> x86_table_builders() {
  std::vector<const char*> out;
  std::vector<LutTablesFn> seen;
  for (const KernelDesc& kd : default_registry().kernels()) {
    if (kd.tables == nullptr || emulated(kd.name).tables == nullptr) continue;
    if (std::find(seen.begin(), seen.end(), kd.tables) != seen.end()) continue;
    seen.push_back(kd.tables);
    out.push_back(kd.name);
  }
  return out;
}

class KernelTableBuilder : public ::testing::TestWithParam<const char*> {};

// Every value and zero point at its ends and at random, rows of several lengths, into slots of
// blocks of 1 and 4 rows: the same bytes as the baseline lut_tables, and nothing else written.
TEST_P(KernelTableBuilder, MatchesBaselineByteForByte) {
  const LutTablesFn tables = emulated(GetParam()).tables;
  std::mt19937 rng(5);
  for (size_t k : {4, 16, 36, 4096})
    for (int32_t zx : {-128, -1, 0, 77, 127})
      for (size_t mr : {1, 4}) {
        std::vector<int8_t> q(k);
        for (size_t i = 0; i < k; ++i)
          q[i] = int8_t(i % 5 == 0 ? -128 : i % 5 == 1 ? 127 : int(rng() % 256) - 128);
        std::vector<uint8_t> want(k / 4 * mr * kLutTableBytes, 0xA5), got(want);
        lut_tables(q.data(), k, zx, mr, want.data() + (mr - 1) * kLutTableBytes);
        tables(q.data(), k, zx, mr, got.data() + (mr - 1) * kLutTableBytes);
        ASSERT_EQ(got, want) << GetParam() << " k=" << k << " zx=" << zx << " mr=" << mr;
      }
}

INSTANTIATE_TEST_SUITE_P(X86, KernelTableBuilder, ::testing::ValuesIn(x86_table_builders()),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KernelTableBuilder);

}  // namespace
}  // namespace lowbit
