#include "format/packed_weights.h"

#include <cerrno>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>
#include <vector>

#include "util/bf16.h"
#include "util/error.h"

namespace lowbit {

void validate_weights(const WeightProblem& p, const int8_t* qvals, const float* scales,
                      const float* bias) {
  validate_problem(p);
  if (qvals == nullptr) fail(Status::invalid_argument, "qvals is NULL");
  if (scales == nullptr) fail(Status::invalid_argument, "scales is NULL");
  const int lo = -(1 << (p.bits - 1)), hi = (1 << (p.bits - 1)) - 1;
  const size_t count = size_t(p.n) * p.k;
  for (size_t i = 0; i < count; ++i)
    if (qvals[i] < lo || qvals[i] > hi)
      fail(Status::invalid_argument, "qvals[", i, "] (row ", i / p.k, ", column ", i % p.k,
           ") = ", int(qvals[i]), " is outside the ", p.bits, "-bit range [", lo, ", ", hi, "]");
  const size_t ns = size_t(p.n) * p.groups();
  for (size_t i = 0; i < ns; ++i)
    if (!std::isfinite(scales[i]))
      fail(Status::invalid_argument, "scales[", i, "] = ", scales[i], " is not finite");
  if (bias)
    for (int i = 0; i < p.n; ++i)
      if (!std::isfinite(bias[i]))
        fail(Status::invalid_argument, "bias[", i, "] = ", bias[i], " is not finite");
}

PackedBuffer pack_buffer(const LayoutDesc& layout, const WeightProblem& p, const int8_t* qvals,
                         const float* scales, const int8_t* zeros, const float* bias) {
  validate_weights(p, qvals, scales, bias);
  bool all_bf16 = layout.bf16_scales;
  for (size_t i = 0; all_bf16 && i < size_t(p.n) * p.groups(); ++i) all_bf16 = bf16_exact(scales[i]);
  PackedBuffer b;
  b.header.layout = &layout;
  b.header.problem = p;
  b.header.scale_format = all_bf16 ? ScaleFormat::bf16 : ScaleFormat::f32;
  b.geo = make_geometry(layout, p, b.header.scale_format);
  b.header.payload_bytes = b.geo.payload_bytes;
  b.bytes.resize(kHeaderSize + b.geo.payload_bytes);
  uint8_t* payload = b.bytes.data() + kHeaderSize;
  pack_payload(b.geo, qvals, scales, zeros, bias, payload);
  b.header.payload_crc = crc32_of(payload, b.geo.payload_bytes);
  const auto hdr = encode_header(b.header);
  std::memcpy(b.bytes.data(), hdr.data(), kHeaderSize);
  return b;
}

namespace {

// A buffer of an older format version, packed again in the current one: exact (the records
// are unpacked and packed again, the column sums derived anew).
PackedBuffer upgrade(const PackedBuffer& old) {
  const WeightProblem& p = old.header.problem;
  std::vector<int8_t> q(size_t(p.n) * size_t(p.k));
  std::vector<float> s(size_t(p.n) * size_t(p.groups()));
  std::vector<int8_t> z(p.has_zeros ? s.size() : 0);
  std::vector<float> bias(p.has_bias ? size_t(p.n) : 0);
  int8_t* zp = p.has_zeros ? z.data() : nullptr;
  float* bp = p.has_bias ? bias.data() : nullptr;
  unpack_payload(old.geo, old.payload(), q.data(), s.data(), zp, bp);
  try {
    return pack_buffer(*old.header.layout, p, q.data(), s.data(), zp, bp);
  } catch (const Error& e) {
    fail(Status::corrupt_data, "packed weights (format version ", old.header.version, "): ", e.what());
  }
}

// The geometry of a decoded buffer, its column sums checked; older versions upgraded.
PackedBuffer finish(PackedBuffer b) {
  b.geo = make_geometry(*b.header.layout, b.header.problem, b.header.scale_format, b.header.version);
  verify_col_sums(b.geo, b.payload());
  if (b.header.version != kFormatVersion) return upgrade(b);
  return b;
}

}  // namespace

PackedBuffer parse_buffer(const void* data, size_t size) {
  if (data == nullptr) fail(Status::invalid_argument, "data is NULL");
  PackedBuffer b;
  b.header = decode_header(static_cast<const uint8_t*>(data), size);
  b.bytes.resize(size);
  std::memcpy(b.bytes.data(), data, size);
  return finish(std::move(b));
}

PackedBuffer view_buffer(const void* data, size_t size) {
  if (data == nullptr) fail(Status::invalid_argument, "data is NULL");
  if (reinterpret_cast<uintptr_t>(data) % AlignedBuffer::kAlign != 0)
    fail(Status::invalid_argument, "packed weights at ", data, " are not ", AlignedBuffer::kAlign,
         "-byte aligned (a view needs the alignment of the payload; copy them instead)");
  PackedBuffer b;
  b.header = decode_header(static_cast<const uint8_t*>(data), size);
  b.view = static_cast<const uint8_t*>(data);
  b.geo = make_geometry(*b.header.layout, b.header.problem, b.header.scale_format, b.header.version);
  // An older version cannot be read in place: the result is an upgraded copy.
  if (b.header.version != kFormatVersion) return finish(std::move(b));
  return b;
}

namespace {
struct File {
  std::FILE* f;
  ~File() {
    if (f) std::fclose(f);
  }
};
}  // namespace

PackedBuffer read_file(const std::string& path) {
  File file{std::fopen(path.c_str(), "rb")};
  if (!file.f) fail(Status::io_error, "cannot open '", path, "': ", std::strerror(errno));
  if (std::fseek(file.f, 0, SEEK_END) != 0) fail(Status::io_error, "cannot seek '", path, "'");
  const long size = std::ftell(file.f);
  if (size < 0) fail(Status::io_error, "cannot size '", path, "': ", std::strerror(errno));
  std::rewind(file.f);
  AlignedBuffer raw{size_t(size)};
  if (size > 0 && std::fread(raw.data(), 1, size_t(size), file.f) != size_t(size))
    fail(Status::io_error, "cannot read '", path, "'");
  PackedBuffer b;
  try {
    b.header = decode_header(raw.data(), raw.size());
  } catch (const Error& e) {
    fail(e.status(), "'", path, "': ", e.what());
  }
  b.bytes = std::move(raw);
  try {
    return finish(std::move(b));
  } catch (const Error& e) {
    fail(e.status(), "'", path, "': ", e.what());
  }
}

void write_file(const PackedBuffer& b, const std::string& path) {
  // Write to a temporary name and rename, so a failed save never leaves a truncated file.
  const std::string tmp = path + ".tmp";
  File file{std::fopen(tmp.c_str(), "wb")};
  if (!file.f) fail(Status::io_error, "cannot create '", tmp, "': ", std::strerror(errno));
  const bool ok = std::fwrite(b.data(), 1, b.size(), file.f) == b.size();
  const bool closed = std::fclose(file.f) == 0;
  file.f = nullptr;
  if (!ok || !closed) {
    std::remove(tmp.c_str());
    fail(Status::io_error, "cannot write '", path, "': ", std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(Status::io_error, "cannot write '", path, "': ", std::strerror(err));
  }
}

}  // namespace lowbit
