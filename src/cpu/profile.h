// CpuProfile: what selection knows about a machine.
//
// The host profile comes from cpuinfo plus a small CPUID / getauxval supplement for what the
// Debian cpuinfo version lacks; it is capped by LOWBIT_ISA. Synthetic profiles (parsed from a
// compact text spec) describe machines we do not have, for tests and tools.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cpu/isa.h"

namespace lowbit {

enum class Uarch : uint16_t {
  unknown = 0,
  // x86-64
  haswell, skylake, skylake_x, icelake, tigerlake, sapphirerapids, emeraldrapids, graniterapids,
  alderlake_p, alderlake_e, raptorlake_p, meteorlake_p, meteorlake_e,
  zen, zen2, zen3, zen4, zen5,
  // AArch64
  cortex_a53, cortex_a55, cortex_a510, cortex_a520, cortex_a57, cortex_a72, cortex_a73,
  cortex_a75, cortex_a76, cortex_a77, cortex_a78, cortex_a710, cortex_a715, cortex_a720,
  cortex_x1, cortex_x2, cortex_x3, cortex_x4, neoverse_n1, neoverse_n2, neoverse_v1,
  neoverse_v2, apple_m1, apple_m2, apple_m3, apple_m4,
  count_
};

const char* uarch_name(Uarch u);              // "cortex-a76", "zen5", "unknown"
bool uarch_from_name(std::string_view s, Uarch* out);
Arch uarch_arch(Uarch u);                     // Arch::unknown for Uarch::unknown

struct CoreInfo {
  Uarch uarch = Uarch::unknown;
  uint32_t cluster = 0;
  uint32_t uarch_index = 0;  // index into CpuProfile::uarchs (cpuinfo's uarch index order)
};

struct CacheSizes {
  size_t l1d = 0;  // bytes, per core
  size_t l2 = 0;   // bytes, per core
  size_t l3 = 0;   // bytes, shared; 0 when the machine has none
};

struct CpuProfile {
  Arch arch = Arch::unknown;
  IsaSet isa;
  std::vector<CoreInfo> cores;  // one per logical processor
  std::vector<Uarch> uarchs;    // distinct uarchs, in cpuinfo's uarch index order
  CacheSizes caches;            // sanitised: never 0 / absurd for l1d and l2
  std::string source;           // "cpuinfo+cpuid", "cpuinfo+hwcap", "supplement", "spec"

  size_t num_threads() const { return cores.size(); }
  // The uarch with the most cores (ties: the first in `uarchs`); `caches` describe its cores.
  Uarch main_uarch() const;
  bool heterogeneous() const { return uarchs.size() > 1; }
  // The text spec this profile round-trips through parse_profile_spec().
  std::string to_spec() const;
};

// Detected once per process (thread-safe), then capped by LOWBIT_ISA and cache overrides
// (LOWBIT_L1D, LOWBIT_L2, LOWBIT_L3, bytes or with K/M/G suffix). Throws std::invalid_argument
// naming the variable and value when an environment variable is malformed.
const CpuProfile& host_profile();

// Detection without any environment caps (for `lowbit info`).
CpuProfile detect_host_profile();

// `cap` as accepted by LOWBIT_ISA: "native" (no cap), "scalar" (no SIMD features),
// a tier name ("sse41", "avx2", "avxvnni", "avx512", "avx512vnni", "neon", "dotprod", "i8mm",
// "sve") or features joined with '+' ("avx2+avxvnni"). The result is profile.isa ∩ cap.
// Throws std::invalid_argument for an unknown word.
IsaSet isa_cap(Arch arch, std::string_view cap);
CpuProfile apply_isa_cap(CpuProfile p, std::string_view cap);

// Compact text spec:
//   "arm64:neon,dotprod,i8mm;cores=4xcortex-a510,3xcortex-a715,1xcortex-x3;l2=512K;l3=8M"
//   "x86_64:avx2,fma;cores=8xzen3"
// Cores listed in separate groups form separate clusters. Throws std::invalid_argument.
//   * Features are comma-separated and may be empty ("x86_64:;cores=2xzen3"); each implies its
//     prerequisites (isa_with_prerequisites), and on arm64 `neon` is always present.
//   * Missing l1d/l2/l3 come from default_caches() of the uarch with the most cores.
//   * Accepted arch names: "x86_64", "arm64" (alias "aarch64").
CpuProfile parse_profile_spec(std::string_view spec);

// Known per-uarch cache sizes, used when detection yields nothing plausible.
CacheSizes default_caches(Uarch u, Arch arch);

// Replaces absurd values (l1d outside [8 KiB, 256 KiB], l2 outside [128 KiB, 16 MiB],
// l3 above 256 MiB) with default_caches(u, arch). l3 = 0 (no L3) is kept.
CacheSizes sanitize_caches(CacheSizes c, Uarch u, Arch arch);

// "32768", "32K", "1M", "2G" (also "32KiB", "32KB", lowercase suffixes) -> bytes. Throws
// std::invalid_argument naming `var` and `value` when malformed. `var` is only for the message.
size_t parse_cache_size(std::string_view var, std::string_view value);
// Inverse of parse_cache_size: "32K", "1M", "1536" (largest exact binary unit).
std::string cache_size_to_string(size_t bytes);

}  // namespace lowbit
