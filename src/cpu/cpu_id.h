// Who made the CPU and which part it is: what a tuning record is keyed by (with the profile's
// uarch, ISA and core count).
#pragma once

#include <cstdint>
#include <string>

namespace lowbit {

struct CpuId {
  std::string vendor;     // CPUID vendor string ("AuthenticAMD"); "arm:0x41" (MIDR implementer)
  uint32_t family = 0;    // x86: CPUID family, model, stepping (extended fields included)
  uint32_t model = 0;
  uint32_t stepping = 0;
  uint64_t midr = 0;      // aarch64: MIDR_EL1 of a core of the most common uarch
};

// This machine's identity (0 / "" for what it cannot read, e.g. under an emulator).
CpuId host_cpu_id();

}  // namespace lowbit
