// The LOWBIT_* environment variables, through the functions that parse them (the process reads
// its environment once): the first byte picks the variable, the rest is its value.
//   LOWBIT_ISA              apply_isa_cap on this machine's profile and on an arm64 one
//   LOWBIT_L1D / L2 / L3    parse_cache_size, which must round-trip cache_size_to_string
#include <stdexcept>
#include <string_view>

#include "cpu/profile.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view value(reinterpret_cast<const char*>(data + 1), size - 1);
  static const lowbit::CpuProfile profiles[] = {
      lowbit::detect_host_profile(),
      lowbit::parse_profile_spec("arm64:neon,dotprod,i8mm,sve;cores=2xcortex-a510,2xcortex-x3")};
  try {
    if (data[0] % 2 == 0) {
      for (const lowbit::CpuProfile& p : profiles) {
        const lowbit::CpuProfile capped = lowbit::apply_isa_cap(p, value);
        if ((capped.isa & p.isa) != capped.isa) std::abort();  // a cap never adds features
      }
    } else {
      const char* var = data[0] % 8 == 1 ? "LOWBIT_L1D" : data[0] % 8 == 3 ? "LOWBIT_L2" : "LOWBIT_L3";
      const size_t bytes = lowbit::parse_cache_size(var, value);
      if (lowbit::parse_cache_size(var, lowbit::cache_size_to_string(bytes)) != bytes) std::abort();
    }
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
