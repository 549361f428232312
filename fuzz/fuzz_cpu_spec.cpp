// CPU spec strings (synthetic profiles: parse_profile_spec) and packing target names
// (target_profile). An accepted spec must round-trip through to_spec(), and selection must
// work on it: a layout is chosen for a small problem and planned at a few m.
#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "cpu/profile.h"
#include "format/packed_weights.h"
#include "registry/registry.h"
#include "select/plan.h"
#include "select/select_layout.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view spec(reinterpret_cast<const char*>(data), size);
  try {
    (void)lowbit::target_profile(spec);
  } catch (const lowbit::Error&) {
  }
  lowbit::CpuProfile p;
  try {
    p = lowbit::parse_profile_spec(spec);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const std::string text = p.to_spec();
  if (lowbit::parse_profile_spec(text).to_spec() != text) std::abort();
  const lowbit::WeightProblem problem{24, 64, 4, 32, true, true};
  lowbit::LayoutDecision d;
  try {
    d = lowbit::select_layout(lowbit::default_registry(), p, problem);
  } catch (const lowbit::Error&) {
    return 0;  // no layout runs here
  }
  const lowbit::PackedHeader h = lowbit::pack_buffer(*d.winner, problem, std::vector<int8_t>(24 * 64).data(),
                                                     std::vector<float>(24 * 2, 0.5f).data(),
                                                     std::vector<int8_t>(24 * 2).data(),
                                                     std::vector<float>(24).data()).header;
  const int threads = int(std::min<size_t>(p.num_threads(), 16));
  for (int m : {1, 7})
    try {
      (void)lowbit::make_plan(lowbit::default_registry(), p, h, m, threads, nullptr, false);
    } catch (const lowbit::Error&) {
    }
  return 0;
}
