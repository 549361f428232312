// Kernels compiled through SIMDe (simde_prelude.h), by registry name: each generated TU
// registers its kernel from a static initialiser; test_x86_kernels swaps them in.
#pragma once

#include <vector>

#include "registry/kernel.h"

namespace lowbit {

struct EmulatedFn {
  const char* name;
  UKernelFn fn;
};
std::vector<EmulatedFn>& emulated_kernels();

struct RegisterEmulated {
  RegisterEmulated(const char* name, UKernelFn fn) { emulated_kernels().push_back({name, fn}); }
};

}  // namespace lowbit
