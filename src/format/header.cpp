#include "format/header.h"

#include <zlib.h>

#include <cstring>

#include "format/layouts.h"
#include "util/error.h"

namespace lowbit {

const char kMagic[8] = {'L', 'O', 'W', 'B', 'I', 'T', 'P', 'W'};

namespace {

constexpr size_t kHeaderCrcOffset = 124;

template <typename T>
void put(uint8_t* p, T v) {
  for (size_t i = 0; i < sizeof(T); ++i) p[i] = uint8_t(uint64_t(v) >> (8 * i));
}
template <typename T>
T get(const uint8_t* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(p[i]) << (8 * i);
  return T(v);
}

[[noreturn]] void corrupt(const char* field, uint64_t value, const char* why) {
  fail(Status::corrupt_data, "packed weights: bad header field '", field, "' = ", value, ": ", why);
}

}  // namespace

uint32_t crc32_of(const void* data, size_t size) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* p = static_cast<const Bytef*>(data);
  while (size > 0) {  // zlib takes uInt lengths
    const uInt chunk = size > (1u << 30) ? (1u << 30) : uInt(size);
    crc = crc32(crc, p, chunk);
    p += chunk;
    size -= chunk;
  }
  return uint32_t(crc);
}

std::array<uint8_t, kHeaderSize> encode_header(const PackedHeader& h) {
  std::array<uint8_t, kHeaderSize> b{};
  uint8_t* p = b.data();
  std::memcpy(p, kMagic, 8);
  put<uint16_t>(p + 8, h.version);
  put<uint16_t>(p + 10, kHeaderSize);
  put<uint16_t>(p + 12, h.layout->id);
  put<uint8_t>(p + 14, h.problem.bits);
  put<uint8_t>(p + 15, (h.problem.has_zeros ? 1 : 0) | (h.problem.has_bias ? 2 : 0));
  put<uint32_t>(p + 16, h.problem.group_size);
  put<uint32_t>(p + 20, h.problem.n);
  put<uint32_t>(p + 24, h.problem.k);
  put<uint16_t>(p + 28, h.layout->nr);
  put<uint16_t>(p + 30, h.layout->kr);
  put<uint16_t>(p + 32, h.layout->sr);
  put<uint8_t>(p + 34, uint8_t(h.scale_format));
  put<uint8_t>(p + 35, uint8_t(h.layout->arch));
  put<uint64_t>(p + 36, h.layout->isa.bits());
  put<uint32_t>(p + 44, h.vector_bytes);
  put<uint64_t>(p + 48, h.payload_bytes);
  put<uint32_t>(p + 56, h.payload_crc);
  put<uint32_t>(p + kHeaderCrcOffset, crc32_of(p, kHeaderCrcOffset));
  return b;
}

PackedHeader decode_header(const uint8_t* data, size_t size) {
  if (data == nullptr) fail(Status::invalid_argument, "packed weights: data is NULL");
  if (size < kHeaderSize)
    fail(Status::corrupt_data, "packed weights: truncated: ", size,
         " bytes, the header alone needs ", kHeaderSize);
  const uint8_t* p = data;
  if (std::memcmp(p, kMagic, 8) != 0)
    fail(Status::corrupt_data, "packed weights: bad magic (not a lowbit packed-weights buffer)");
  const uint32_t stored_crc = get<uint32_t>(p + kHeaderCrcOffset);
  const uint32_t crc = crc32_of(p, kHeaderCrcOffset);
  if (stored_crc != crc)
    fail(Status::corrupt_data, "packed weights: header checksum mismatch (stored ", stored_crc,
         ", computed ", crc, "): the header is corrupt");
  const uint16_t version = get<uint16_t>(p + 8);
  if (version < 1 || version > kFormatVersion)
    fail(Status::unsupported, "packed weights: format version ", version,
         " is not supported (this build reads versions 1 to ", kFormatVersion, ")");
  if (get<uint16_t>(p + 10) != kHeaderSize) corrupt("header_size", get<uint16_t>(p + 10), "must be 128");
  for (size_t i = 60; i < kHeaderCrcOffset; ++i)
    if (p[i] != 0) corrupt("reserved", i, "reserved bytes must be zero");

  PackedHeader h;
  h.version = version;
  const uint16_t layout_id = get<uint16_t>(p + 12);
  h.layout = find_layout(layout_id);
  if (h.layout == nullptr)
    fail(Status::unsupported, "packed weights: unknown layout id ", layout_id,
         " (packed by a newer lowbit?)");
  const uint8_t flags = get<uint8_t>(p + 15);
  if (flags & ~3u) corrupt("flags", flags, "only bits 0 (zeros) and 1 (bias) are defined");
  h.problem.bits = get<uint8_t>(p + 14);
  h.problem.has_zeros = flags & 1;
  h.problem.has_bias = flags & 2;
  const uint32_t group = get<uint32_t>(p + 16), n = get<uint32_t>(p + 20), k = get<uint32_t>(p + 24);
  if (group > uint32_t(kMaxGroupSize)) corrupt("group_size", group, "too large");
  if (n > uint32_t(INT32_MAX)) corrupt("n", n, "too large");
  if (k > uint32_t(INT32_MAX)) corrupt("k", k, "too large");
  h.problem.group_size = int(group);
  h.problem.n = int(n);
  h.problem.k = int(k);
  try {
    validate_problem(h.problem);
  } catch (const Error& e) {
    fail(Status::corrupt_data, "packed weights: bad header: ", e.what());
  }
  if (get<uint16_t>(p + 28) != h.layout->nr) corrupt("nr", get<uint16_t>(p + 28), "disagrees with the layout");
  if (get<uint16_t>(p + 30) != h.layout->kr) corrupt("kr", get<uint16_t>(p + 30), "disagrees with the layout");
  if (get<uint16_t>(p + 32) != h.layout->sr) corrupt("sr", get<uint16_t>(p + 32), "disagrees with the layout");
  const uint8_t sf = get<uint8_t>(p + 34);
  if (sf > 1 || (sf == 1 && !h.layout->bf16_scales))
    corrupt("scale_dtype", sf, "not a scale type of this layout");
  h.scale_format = ScaleFormat(sf);
  if (get<uint8_t>(p + 35) != uint8_t(h.layout->arch))
    corrupt("arch", get<uint8_t>(p + 35), "disagrees with the layout");
  if (get<uint64_t>(p + 36) != h.layout->isa.bits())
    corrupt("isa", get<uint64_t>(p + 36), "disagrees with the layout");
  h.vector_bytes = get<uint32_t>(p + 44);
  if (h.vector_bytes != 0) corrupt("vector_bytes", h.vector_bytes, "no layout uses scalable vectors");
  h.payload_bytes = get<uint64_t>(p + 48);
  const uint64_t expected = make_geometry(*h.layout, h.problem, h.scale_format, version).payload_bytes;
  if (h.payload_bytes != expected)
    fail(Status::corrupt_data, "packed weights: payload size ", h.payload_bytes,
         " disagrees with the shape (expected ", expected, ")");
  if (size - kHeaderSize < h.payload_bytes)
    fail(Status::corrupt_data, "packed weights: truncated: ", size, " bytes, expected ",
         kHeaderSize + h.payload_bytes);
  if (size - kHeaderSize > h.payload_bytes)
    fail(Status::corrupt_data, "packed weights: ", size - kHeaderSize - h.payload_bytes,
         " trailing bytes after the payload");
  h.payload_crc = get<uint32_t>(p + 56);
  const uint32_t pcrc = crc32_of(p + kHeaderSize, h.payload_bytes);
  if (pcrc != h.payload_crc)
    fail(Status::corrupt_data, "packed weights: payload checksum mismatch (stored ", h.payload_crc,
         ", computed ", pcrc, "): the weights are corrupt");
  return h;
}

}  // namespace lowbit
