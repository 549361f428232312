// A packed-weights buffer (header + payload) and its parsed header: packing from unpacked
// weights, validation of buffers and files from outside, save/load.
#pragma once

#include <string>

#include "format/header.h"
#include "format/layout.h"
#include "util/aligned.h"

namespace lowbit {

struct PackedBuffer {
  AlignedBuffer bytes;            // header then payload; the payload starts 64-byte aligned
  const uint8_t* view = nullptr;  // the caller's memory instead of `bytes` (view_buffer)
  PackedHeader header;
  PackedGeometry geo;
  const uint8_t* data() const { return view ? view : bytes.data(); }
  size_t size() const { return kHeaderSize + header.payload_bytes; }
  const uint8_t* payload() const { return data() + kHeaderSize; }
};

// Validates the values (qvals within the bit width, finite scales and bias) and packs.
// Scales are stored as bf16 when the layout allows it and every scale is bf16-exact.
PackedBuffer pack_buffer(const LayoutDesc& layout, const WeightProblem& p, const int8_t* qvals,
                         const float* scales, const int8_t* zeros, const float* bias);

// Copies and validates (decode_header) a buffer from outside.
PackedBuffer parse_buffer(const void* data, size_t size);
// Validates a buffer from outside and uses it in place: `data` must be 64-byte aligned (like
// `bytes`) and outlive the result unchanged.
PackedBuffer view_buffer(const void* data, size_t size);

PackedBuffer read_file(const std::string& path);   // Error(io_error) / corrupt_data
void write_file(const PackedBuffer& b, const std::string& path);  // Error(io_error)

// Checks the argument pointers and values of a pack call; throws Error(invalid_argument).
void validate_weights(const WeightProblem& p, const int8_t* qvals, const float* scales,
                      const float* bias);

}  // namespace lowbit
