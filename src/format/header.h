// The packed-weights header: fixed 128 bytes, little-endian, validated field by field.
//
//  off size field                    off size field
//    0   8  magic "LOWBITPW"           32   2  sr
//    8   2  format version (2; 1 read) 34   1  scale dtype (0 f32, 1 bf16)
//   10   2  header size (128)          35   1  arch of the ISA features (0 any, 1 x86-64, 2 arm64)
//   12   2  layout id                  36   8  ISA features the layout was packed for
//   14   1  weight bits (1..8)         44   4  vector length in bytes (scalable vectors; else 0)
//   15   1  flags: 1 zeros, 2 bias     48   8  payload size in bytes
//   16   4  group size                 56   4  CRC-32 of the payload
//   20   4  n                          60  64  reserved, zero
//   24   4  k                         124   4  CRC-32 of bytes 0..123
//   28   2  nr             30 2 kr
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "format/layout.h"

namespace lowbit {

constexpr size_t kHeaderSize = 128;
extern const char kMagic[8];

struct PackedHeader {
  uint16_t version = kFormatVersion;  // of the payload's arrangement (make_geometry)
  const LayoutDesc* layout = nullptr;
  WeightProblem problem;
  ScaleFormat scale_format = ScaleFormat::f32;
  uint32_t vector_bytes = 0;
  uint64_t payload_bytes = 0;
  uint32_t payload_crc = 0;
};

uint32_t crc32_of(const void* data, size_t size);

// Serialises the header (computing its checksum). `h.payload_crc` must already be set.
std::array<uint8_t, kHeaderSize> encode_header(const PackedHeader& h);

// Validates every field of the buffer [data, data+size) (header then payload), both
// checksums and the payload size against the layout geometry of the header's format version
// (1 or 2). Throws Error(corrupt_data) (or unsupported for another format version) with a
// message naming the bad field.
PackedHeader decode_header(const uint8_t* data, size_t size);

}  // namespace lowbit
