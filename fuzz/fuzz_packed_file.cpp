// Packed weights from a file (lowbit_load): the same bytes as fuzz_packed_buffer, through the
// file reader.
#include <cstring>

#include "packed_use.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const lowbit::fuzz::MemFile file(data, size);
  lowbit_packed_weights* w = nullptr;
  const lowbit_status s = lowbit_load(file.path().c_str(), &w);
  lowbit::fuzz::expect_no_internal_error(s, "lowbit_load");
  if (s != LOWBIT_OK) return 0;
  int32_t n = 0, k = 0;
  std::memcpy(&n, data + 20, 4);
  std::memcpy(&k, data + 24, 4);
  lowbit::fuzz::use_packed(w, n, k);
  lowbit_free(w);
  return 0;
}
