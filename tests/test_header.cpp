// Packed buffers come from outside: every field corrupted in turn, every truncation, every
// flipped bit gives the right status and a message, never a crash or a silent result.
#include <gtest/gtest.h>

#include <cstring>

#include "format/header.h"
#include "format/layouts.h"
#include "format/packed_weights.h"
#include "test_util.h"

namespace lowbit {
namespace {

PackedBuffer small_buffer() {
  const WeightProblem p{5, 32, 4, 16, true, true};
  const test::Weights w = test::random_weights(p, 1);
  return pack_buffer(portable_layout(), p, w.q.data(), w.scales.data(), w.zeros_ptr(), w.bias_ptr());
}

std::vector<uint8_t> bytes_of(const PackedBuffer& b) {
  return std::vector<uint8_t>(b.bytes.data(), b.bytes.data() + b.bytes.size());
}

void refresh_header_crc(std::vector<uint8_t>& v) {
  const uint32_t crc = crc32_of(v.data(), 124);
  std::memcpy(v.data() + 124, &crc, 4);  // little-endian host
}

Status status_of(const uint8_t* data, size_t size, std::string* msg = nullptr) {
  try {
    parse_buffer(data, size);
    return Status::ok;
  } catch (const Error& e) {
    if (msg) *msg = e.what();
    return e.status();
  }
}

Status status_of(const std::vector<uint8_t>& v, std::string* msg = nullptr) {
  return status_of(v.data(), v.size(), msg);
}

TEST(Header, RoundTrip) {
  const PackedBuffer b = small_buffer();
  const PackedBuffer c = parse_buffer(b.bytes.data(), b.bytes.size());
  EXPECT_EQ(c.header.layout, b.header.layout);
  EXPECT_EQ(c.header.problem.n, 5);
  EXPECT_EQ(c.header.problem.k, 32);
  EXPECT_EQ(c.header.problem.bits, 4);
  EXPECT_TRUE(c.header.problem.has_zeros && c.header.problem.has_bias);
  EXPECT_EQ(c.header.payload_bytes, b.geo.payload_bytes);
}

struct FieldCase {
  const char* field;
  size_t offset, size;
  uint64_t bad_value;
  Status want;
  const char* message;  // expected in the error once the header checksum is made to match
};

const FieldCase kFields[] = {
    {"magic", 0, 8, 0x4141414141414141ull, Status::corrupt_data, "magic"},
    {"version", 8, 2, 3, Status::unsupported, "version 3"},
    {"version", 8, 2, 0, Status::unsupported, "version 0"},
    {"header_size", 10, 2, 64, Status::corrupt_data, "header_size"},
    {"layout", 12, 2, 999, Status::unsupported, "layout id 999"},
    {"bits", 14, 1, 9, Status::corrupt_data, "bits"},
    {"flags", 15, 1, 0x80, Status::corrupt_data, "flags"},
    {"group_size", 16, 4, 24, Status::corrupt_data, "group_size"},
    {"n", 20, 4, 6, Status::corrupt_data, "payload size"},
    {"n_zero", 20, 4, 0, Status::corrupt_data, "n must be"},
    {"k", 24, 4, 48, Status::corrupt_data, "group_size 16 does not divide|payload size"},
    {"nr", 28, 2, 4, Status::corrupt_data, "'nr'"},
    {"kr", 30, 2, 4, Status::corrupt_data, "'kr'"},
    {"sr", 32, 2, 2, Status::corrupt_data, "'sr'"},
    {"scale_dtype", 34, 1, 7, Status::corrupt_data, "scale_dtype"},
    {"arch", 35, 1, 2, Status::corrupt_data, "'arch'"},
    {"isa", 36, 8, 4, Status::corrupt_data, "'isa'"},
    {"vector_bytes", 44, 4, 16, Status::corrupt_data, "vector_bytes"},
    {"payload_size", 48, 8, 12, Status::corrupt_data, "payload size"},
    {"payload_crc", 56, 4, 1234, Status::corrupt_data, "payload checksum"},
    {"reserved", 70, 1, 1, Status::corrupt_data, "reserved"},
};

TEST(Header, EveryFieldCorruptedWithoutFixingTheChecksumIsCaught) {
  const std::vector<uint8_t> good = bytes_of(small_buffer());
  for (const FieldCase& f : kFields) {
    std::vector<uint8_t> v = good;
    v[f.offset] ^= 0x10;
    std::string msg;
    const Status s = status_of(v, &msg);
    EXPECT_EQ(s, Status::corrupt_data) << f.field << ": " << msg;
    EXPECT_FALSE(msg.empty());
  }
}

TEST(Header, EveryFieldWithABadValueAndAMatchingChecksumIsNamed) {
  const std::vector<uint8_t> good = bytes_of(small_buffer());
  for (const FieldCase& f : kFields) {
    std::vector<uint8_t> v = good;
    for (size_t i = 0; i < f.size; ++i) v[f.offset + i] = uint8_t(f.bad_value >> (8 * i));
    if (std::string(f.field) != "magic") refresh_header_crc(v);
    std::string msg;
    const Status s = status_of(v, &msg);
    EXPECT_EQ(s, f.want) << f.field << ": " << msg;
    bool found = false;
    std::string alts = f.message;
    for (size_t pos = 0, bar; !found; pos = bar + 1) {
      bar = alts.find('|', pos);
      found = msg.find(alts.substr(pos, bar - pos)) != std::string::npos;
      if (bar == std::string::npos) break;
    }
    EXPECT_TRUE(found) << f.field << ": message '" << msg << "' lacks '" << f.message << "'";
  }
}

TEST(Header, EveryTruncationAndTrailingGarbageIsCaught) {
  const std::vector<uint8_t> good = bytes_of(small_buffer());
  for (size_t len = 0; len < good.size(); ++len) {
    std::string msg;
    ASSERT_EQ(status_of(good.data(), len, &msg), Status::corrupt_data) << "length " << len;
    ASSERT_NE(msg.find("truncated"), std::string::npos) << len << ": " << msg;
  }
  std::vector<uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_EQ(status_of(longer), Status::corrupt_data);
}

TEST(Header, EveryFlippedBitIsCaught) {
  const std::vector<uint8_t> good = bytes_of(small_buffer());
  for (size_t bit = 0; bit < good.size() * 8; ++bit) {
    std::vector<uint8_t> v = good;
    v[bit / 8] ^= uint8_t(1u << (bit % 8));
    const Status s = status_of(v);
    ASSERT_TRUE(s == Status::corrupt_data || s == Status::unsupported) << "bit " << bit;
  }
}

TEST(Header, NullBufferIsAnArgumentError) {
  EXPECT_THROW(parse_buffer(nullptr, 10), Error);
}

}  // namespace
}  // namespace lowbit
