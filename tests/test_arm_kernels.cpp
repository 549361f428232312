// The aarch64 kernels on what test_kernels' cases do not reach: calls over many panels (the
// GEMVs run two panels side by side, then an odd last one) at every width, with zero points,
// bias and both scale formats; group sizes of several sum blocks of odd sizes (48, 80, ...);
// and the extremes of the zero-point correction (|qx - zx| = 255 against the widest weight
// and zero point, in groups of 128 to 2048). Bit for bit against the scalar reference.
// Skips itself on other architectures.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "cpu/profile.h"
#include "format/packed_weights.h"
#include "ops/linear.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "test_util.h"

namespace lowbit {
namespace {

std::vector<const KernelDesc*> arm_kernels() {
  std::vector<const KernelDesc*> out;
  for (const KernelDesc& k : default_registry().kernels())
    if (k.fn != nullptr && default_registry().layout(k.layout_id)->arch == Arch::arm64 &&
        host_profile().isa.contains(k.requires))
      out.push_back(&k);
  return out;
}

// Runs `kd` over all of m rows and all n columns in one task and compares with the reference.
void check(const KernelDesc& kd, const test::Weights& w, int m, const float* x, const std::string& what) {
  const LayoutDesc& layout = *default_registry().layout(kd.layout_id);
  const PackedBuffer b = pack_buffer(layout, w.p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
  const ExecPlan plan = single_kernel_plan(kd, m, 1, b.geo.n_padded);
  const ClampRange clamp{true, -3.0f, 2.5f};
  LinearOptions opt;
  opt.has_clamp = true;
  opt.clamp_min = clamp.lo;
  opt.clamp_max = clamp.hi;
  const std::vector<float> want = test::reference(w, m, x, clamp);
  std::vector<float> got(want.size(), -1.0f);
  execute_plan(plan, host_profile(), b, m, x, got.data(), opt, nullptr, {});
  ASSERT_TRUE(test::bits_equal(got.data(), want.data(), want.size()))
      << kd.name << " " << what << " scales " << (b.header.scale_format == ScaleFormat::bf16 ? "bf16" : "f32")
      << ": first difference at " << test::first_difference(got.data(), want.data(), want.size());
}

class ArmKernelTest : public ::testing::TestWithParam<const KernelDesc*> {};

TEST_P(ArmKernelTest, ManyPanelsEveryWidthAndGroupOfSeveralBlocks) {
  const KernelDesc& kd = *GetParam();
  int i = 0;
  for (int bits = 1; bits <= 8; ++bits)
    for (int group : {16, 48, 80, 144, 256}) {
      ++i;
      const bool zeros = i % 2 == 0, bias = i % 3 != 0, bf16 = i % 4 < 2;
      const WeightProblem p{5 * 8 - 3, group * (group > 128 ? 1 : 2), bits, group, zeros, bias};
      const test::Weights w = test::random_weights(p, uint32_t(100 + i), bf16);
      for (int m : {1, kd.mr}) {
        const test::Activations a = test::random_activations(m, p.k, uint32_t(7 * i + m));
        check(kd, w, m, a.x, concat("bits=", bits, " group=", group, " m=", m, " zeros=", zeros, " bias=", bias));
        if (HasFatalFailure()) return;
      }
    }
}

// Every d_block and group sum at its largest magnitude: weights all -2^(b-1) (or 2^(b-1)-1)
// against zero point 127 (or -128), activation rows of one sign, so |qx - zx| = 255 on every k.
TEST_P(ArmKernelTest, ExtremesOfTheZeroPointCorrection) {
  const KernelDesc& kd = *GetParam();
  for (int bits : {1, 4, 8})
    for (int group : {128, 2048})
      for (int sign : {-1, 1}) {
        const WeightProblem p{19, group, bits, group, true, false};
        test::Weights w = test::random_weights(p, uint32_t(bits + group));
        const int q = sign < 0 ? -(1 << (bits - 1)) : (1 << (bits - 1)) - 1;
        for (auto& v : w.q) v = int8_t(q);
        for (auto& z : w.zeros) z = int8_t(sign < 0 ? 127 : -128);
        const int m = kd.mr;
        test::Activations a = test::random_activations(m, p.k, 5);
        for (int r = 0; r < m; ++r)
          for (int k = 0; k < p.k; ++k) a.x[size_t(r) * p.k + k] = r % 2 ? -1.0f : 1.0f;
        check(kd, w, m, a.x, concat("bits=", bits, " group=", group, " q=", q));
        if (HasFatalFailure()) return;
      }
}

INSTANTIATE_TEST_SUITE_P(Registry, ArmKernelTest, ::testing::ValuesIn(arm_kernels()),
                         [](const ::testing::TestParamInfo<const KernelDesc*>& info) {
                           return std::string(info.param->name);
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ArmKernelTest);

}  // namespace
}  // namespace lowbit
