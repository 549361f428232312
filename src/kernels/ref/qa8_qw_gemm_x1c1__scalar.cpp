#include "kernels/ref/qa8_qw_gemm_x1c1__scalar.h"

#include <vector>

namespace lowbit {

namespace {

// One implementation for every mr: each weight record is unpacked once per LHS block.
template <int kMr>
void gemm_scalar(const GemmShape& shape, const UKernelArgs& a) {
  const PackedGeometry& g = *shape.geo;
  const LhsBlockLayout l = lhs_block_layout({kMr, 1}, size_t(shape.k), size_t(g.groups));
  const float* sx = lhs_scales(a.lhs);
  const int32_t* zx = lhs_zeros(a.lhs, l);
  const int8_t* qx = lhs_q(a.lhs, l);
  thread_local std::vector<int8_t> qw;
  qw.resize(size_t(g.group_size));
  for (size_t col = 0; col < a.n; ++col) {
    const uint8_t* panel = a.rhs + col * g.panel_bytes;
    float acc[kMr] = {};
    for (int grp = 0; grp < g.groups; ++grp) {
      float sw;
      int8_t zw;
      unpack_record(g, panel + g.record_offset(0, grp), qw.data(), &sw, &zw);
      for (size_t r = 0; r < a.m; ++r) {
        int32_t d = 0;
        for (int i = 0; i < g.group_size; ++i) {
          const size_t kk = size_t(grp) * g.group_size + i;
          d += (int32_t(qx[kk * kMr + r]) - zx[r]) * (int32_t(qw[i]) - zw);
        }
        acc[r] = __builtin_fmaf(float(d), sw, acc[r]);
      }
    }
    const float bias = a.bias ? a.bias[col] : 0.0f;
    for (size_t r = 0; r < a.m; ++r)
      a.y[r * a.y_stride + col] = finish_output(acc[r], sx[r], bias, a.clamp_min, a.clamp_max);
  }
}

}  // namespace

void qa8_qw_gemm_1x1c1__scalar(const GemmShape& s, const UKernelArgs& a) { gemm_scalar<1>(s, a); }
void qa8_qw_gemm_4x1c1__scalar(const GemmShape& s, const UKernelArgs& a) { gemm_scalar<4>(s, a); }

}  // namespace lowbit
