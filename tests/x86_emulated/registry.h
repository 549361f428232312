// Kernels and row quantizers compiled through SIMDe (simde_prelude.h): each generated TU
// registers its function and the real one it stands for from a static initialiser;
// test_x86_kernels swaps them in.
#pragma once

#include <vector>

#include "ops/lhs_pack.h"
#include "ops/quantize_activations.h"
#include "registry/kernel.h"

namespace lowbit {

struct EmulatedFn {
  const char* name;  // the kernel's registry name (or the quantizer's / table builder's function name)
  UKernelFn fn = nullptr;
  RowQuantizeFn quantize = nullptr, real_quantize = nullptr;
  LutTablesFn tables = nullptr, real_tables = nullptr;
};
std::vector<EmulatedFn>& emulated_kernels();

struct RegisterEmulated {
  RegisterEmulated(const char* name, UKernelFn fn, UKernelFn) {
    emulated_kernels().push_back({name, fn});
  }
  RegisterEmulated(const char* name, RowQuantizeFn fn, RowQuantizeFn real) {
    emulated_kernels().push_back({name, nullptr, fn, real});
  }
  RegisterEmulated(const char* name, LutTablesFn fn, LutTablesFn real) {
    emulated_kernels().push_back({name, nullptr, nullptr, nullptr, fn, real});
  }
};

}  // namespace lowbit
