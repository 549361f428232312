// Packed weights from memory (lowbit_from_buffer). Each input is tried as it is and with both
// CRC-32s recomputed, so that mutations also reach the fields behind the checksums.
#include <cstring>
#include <vector>

#include "format/header.h"
#include "packed_use.h"

namespace {

void try_buffer(const uint8_t* data, size_t size) {
  lowbit_packed_weights* w = nullptr;
  const lowbit_status s = lowbit_from_buffer(data, size, &w);
  lowbit::fuzz::expect_no_internal_error(s, "lowbit_from_buffer");
  if (s != LOWBIT_OK) return;
  int32_t n = 0, k = 0;
  std::memcpy(&n, data + 20, 4);
  std::memcpy(&k, data + 24, 4);
  lowbit::fuzz::use_packed(w, n, k);
  lowbit_free(w);
}

void put_u32(std::vector<uint8_t>& b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + size_t(i)] = uint8_t(v >> (8 * i));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try_buffer(data, size);
  if (size >= lowbit::kHeaderSize) {
    std::vector<uint8_t> fixed(data, data + size);
    put_u32(fixed, 56, lowbit::crc32_of(fixed.data() + lowbit::kHeaderSize, size - lowbit::kHeaderSize));
    put_u32(fixed, 124, lowbit::crc32_of(fixed.data(), 124));
    try_buffer(fixed.data(), fixed.size());
  }
  return 0;
}
