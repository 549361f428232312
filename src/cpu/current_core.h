// Which of the profile's uarchs the calling thread is running on, right now.
#pragma once

#include <cstdint>

#include "cpu/profile.h"

namespace lowbit {

// Index into p.uarchs. Homogeneous profiles: 0 without any query. Arm: cpuinfo's per-core
// answer. x86 hybrids: CPUID leaf 0x1A core type (cpuinfo does not read it), mapped to the
// profile's efficiency-core uarch for Atom cores.
uint32_t current_core_uarch_index(const CpuProfile& p);

}  // namespace lowbit
