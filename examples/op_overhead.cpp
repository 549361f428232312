// What calling torch.ops.lowbit.linear through PyTorch's dispatcher (as C++ and TorchScript do)
// costs over calling the C API's lowbit_linear on the same weights and activations: both timed
// in one process, interleaved, medians of batches (docs/python.md). Built with the op library:
//   cmake --build build --target lowbit_op_overhead && ./build/python/lowbit_op_overhead [n k m threads]
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/InferenceMode.h>
#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "lowbit/lowbit.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename F>
double ns_per_call(F&& f, int calls) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 256, k = argc > 2 ? std::atoi(argv[2]) : 256;
  const int m = argc > 3 ? std::atoi(argv[3]) : 1, threads = argc > 4 ? std::atoi(argv[4]) : 1;
  if (!dlopen(LOWBIT_TORCH_OPS, RTLD_NOW)) {  // registers torch.ops.lowbit
    std::fprintf(stderr, "cannot load %s: %s\n", LOWBIT_TORCH_OPS, dlerror());
    return 1;
  }
  at::manual_seed(0);
  const at::Tensor qvals = at::randint(-8, 8, {n, k}, at::kChar);
  const at::Tensor scales = at::rand({n, k / 32}) * 0.01 + 0.001;
  auto pack = c10::Dispatcher::singleton().findSchemaOrThrow("lowbit::pack", "")
                  .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const c10::optional<at::Tensor>&,
                                    const c10::optional<at::Tensor>&, int64_t, int64_t, c10::optional<c10::string_view>)>();
  auto linear = c10::Dispatcher::singleton().findSchemaOrThrow("lowbit::linear", "")
                    .typed<at::Tensor(const at::Tensor&, const at::Tensor&, c10::optional<double>,
                                      c10::optional<double>, c10::optional<int64_t>)>();
  const at::Tensor packed = pack.call(qvals, scales, c10::nullopt, c10::nullopt, 4, 32, c10::nullopt);
  lowbit_packed_weights* w = nullptr;
  if (lowbit_from_buffer(packed.data_ptr(), size_t(packed.numel()), &w) != LOWBIT_OK) {
    std::fprintf(stderr, "%s\n", lowbit_last_error());
    return 1;
  }
  const at::Tensor x = at::randn({m, k});
  std::vector<float> y(size_t(m) * n);
  const lowbit_linear_options opt{0, 0.0f, 0.0f, threads};

  c10::InferenceMode serving;  // as an inference loop runs
  const at::Tensor yo = linear.call(x, packed, c10::nullopt, c10::nullopt, threads);
  lowbit_linear(w, m, x.data_ptr<float>(), y.data(), &opt);
  const bool same = std::memcmp(yo.data_ptr<float>(), y.data(), y.size() * sizeof(float)) == 0;
  const int calls = 200, rounds = 31;
  std::vector<double> c_api, op;
  for (int r = 0; r < rounds; ++r) {
    c_api.push_back(ns_per_call([&] { lowbit_linear(w, m, x.data_ptr<float>(), y.data(), &opt); }, calls));
    op.push_back(ns_per_call([&] { linear.call(x, packed, c10::nullopt, c10::nullopt, threads); }, calls));
  }
  const double c = median(c_api), o = median(op);
  std::printf("n=%d k=%d m=%d threads=%d, 4-bit group 32; medians of %d interleaved batches of %d calls\n",
              n, k, m, threads, rounds, calls);
  std::printf("C API lowbit_linear          %9.0f ns/call\n", c);
  std::printf("torch.ops.lowbit.linear (C++) %8.0f ns/call   overhead %+.0f ns   same bits: %s\n", o, o - c,
              same ? "yes" : "NO");
  lowbit_free(w);
  return same ? 0 : 1;
}
