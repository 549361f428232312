#include "cpu/current_core.h"

#include <cpuinfo.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace lowbit {

uint32_t current_core_uarch_index(const CpuProfile& p) {
  if (p.uarchs.size() <= 1) return 0;
#if defined(__x86_64__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid_count(0x1A, 0, &a, &b, &c, &d)) return 0;
  const bool atom = (a >> 24) == 0x20;
  for (uint32_t i = 0; i < p.uarchs.size(); ++i) {
    const bool efficiency = p.uarchs[i] == Uarch::alderlake_e || p.uarchs[i] == Uarch::meteorlake_e;
    if (efficiency == atom) return i;
  }
  return 0;
#else
  // Heterogeneous profiles only come from an initialised cpuinfo (it aborts otherwise).
  return cpuinfo_get_current_uarch_index_with_default(0);
#endif
}

}  // namespace lowbit
