#include "format/layout.h"

#include <cstring>
#include <numeric>
#include <vector>

#include "util/bf16.h"
#include "util/error.h"

namespace lowbit {

void validate_problem(const WeightProblem& p) {
  if (p.n < 1) fail(Status::invalid_argument, "n must be >= 1 (got ", p.n, ")");
  if (p.k < 1) fail(Status::invalid_argument, "k must be >= 1 (got ", p.k, ")");
  if (p.bits < 1 || p.bits > 8)
    fail(Status::invalid_argument, "bits must be in 1..8 (got ", p.bits, ")");
  if (p.group_size < 16 || p.group_size % 16 != 0 || p.group_size > kMaxGroupSize)
    fail(Status::invalid_argument, "group_size must be a multiple of 16 in [16, ", kMaxGroupSize,
         "] (got ", p.group_size, ")");
  if (p.k % p.group_size != 0)
    fail(Status::invalid_argument, "group_size ", p.group_size, " does not divide k = ", p.k);
  if (int64_t(p.n) * p.k >= (int64_t{1} << 31))
    fail(Status::invalid_argument, "n*k = ", int64_t(p.n) * p.k, " exceeds 2^31-1 (n = ", p.n,
         ", k = ", p.k, ")");
}

namespace {

// Visits every (stream index, plane byte, bit offset) of one plane, in plane byte order.
template <typename F>
void for_each_plane_value(const Plane& pl, size_t stream_bytes, F&& f) {
  const int per_byte = 8 / pl.width;
  const size_t chunk_values = size_t(pl.chunk) * per_byte;
  for (size_t c = 0; c < stream_bytes / chunk_values; ++c)
    for (int j = 0; j < pl.chunk; ++j)
      for (int s = 0; s < per_byte; ++s)
        f(c * chunk_values + size_t(s) * pl.chunk + j, pl.offset + c * pl.chunk + j, s * pl.width);
}

// Visits every bit field of a record's weights: f(stream index, record byte, bit offset in the
// byte, shift of the field in u, mask of the field), for either encoding (format/layout.h).
template <typename F>
void for_each_field(const PackedGeometry& g, F&& f) {
  if (g.encoding == WeightEncoding::lut_k4) {
    for (size_t t = 0; t < size_t(g.group_size) / 8; ++t)
      for (int p = 0; p < g.bits; ++p)
        for (int c = 0; c < g.nr; ++c) {
          const size_t byte = (t * size_t(g.bits) + size_t(p)) * size_t(g.nr) + g.lut_byte(c);
          for (int j = 0; j < 8; ++j)  // k = 8t + j: k-block 2t + j/4 of kr = 4
            f(((2 * t + size_t(j / 4)) * size_t(g.nr) + size_t(c)) * 4 + size_t(j % 4), byte, j, p, 1u);
        }
    return;
  }
  for (int i = 0; i < g.num_planes; ++i) {
    const Plane& pl = g.planes[i];
    const unsigned mask = (1u << pl.width) - 1;
    for_each_plane_value(pl, g.stream_bytes,
                         [&](size_t idx, size_t byte, int bit) { f(idx, byte, bit, pl.shift, mask); });
  }
}

size_t scale_bytes(ScaleFormat sf) { return sf == ScaleFormat::bf16 ? 2 : 4; }

size_t align64(size_t v) { return (v + 63) / 64 * 64; }

// The stream u of a record, from its bit planes.
void record_stream(const PackedGeometry& g, const uint8_t* rec, uint8_t* stream) {
  std::memset(stream, 0, g.stream_bytes);
  for_each_field(g, [&](size_t idx, size_t byte, int bit, int shift, unsigned mask) {
    stream[idx] |= uint8_t(((rec[byte] >> bit) & mask) << shift);
  });
}

// The column-sum entries of one record's group (sums_per_group x nr lanes) into `out`.
void col_sums(const PackedGeometry& g, const uint8_t* rec, uint8_t* out) {
  std::vector<uint8_t> stream(g.stream_bytes);
  record_stream(g, rec, stream.data());
  const int offset = 1 << (g.bits - 1);
  for (int s = 0; s < g.sums_per_group; ++s)
    for (int c = 0; c < g.nr; ++c) {
      int su = 0;
      for (int kk = s * g.sum_block; kk < (s + 1) * g.sum_block; ++kk)
        su += stream[(size_t(kk / g.kr) * g.nr + c) * g.kr + kk % g.kr];
      const int cz = offset + (g.has_zeros ? int8_t(rec[g.zeros_offset + c]) : 0);
      const uint32_t lane = uint32_t(uint16_t(su)) | uint32_t(uint16_t(int16_t(cz))) << 16;
      std::memcpy(out + (size_t(s) * g.nr + c) * 4, &lane, 4);
    }
}

}  // namespace

int col_sum_block(int group_size) {
  // A multiple of 32 when the group is one: a plane chunk of 1-bit values spans 32 k in the
  // x86 layouts (sr = 4·nr), and every sum block must be whole chunks.
  const int unit = group_size % 32 == 0 ? 32 : 16;
  int best = unit;
  for (int b = unit; b <= kMaxSumBlock && b <= group_size; b += unit)
    if (group_size % b == 0) best = b;
  return best;
}

PackedGeometry make_geometry(const LayoutDesc& layout, const WeightProblem& p, ScaleFormat sf,
                             uint16_t version) {
  PackedGeometry g;
  g.n = p.n;
  g.nr = layout.nr;
  g.kr = layout.kr;
  g.n_padded = (p.n + layout.nr - 1) / layout.nr * layout.nr;
  g.panels = g.n_padded / layout.nr;
  g.groups = p.groups();
  g.group_size = p.group_size;
  g.bits = p.bits;
  g.has_zeros = p.has_zeros;
  g.has_bias = p.has_bias;
  g.scale_format = sf;
  g.encoding = layout.encoding;
  g.stream_bytes = size_t(layout.nr) * p.group_size;
  g.num_planes = layout.encoding == WeightEncoding::planes ? plane_count(p.bits) : 0;
  size_t offset = layout.encoding == WeightEncoding::lut_k4 ? g.stream_bytes * size_t(p.bits) / 8 : 0;
  for (int i = 0; i < g.num_planes; ++i) {
    const int w = plane_width(p.bits, i);
    const size_t plane_bytes = g.stream_bytes * w / 8;
    g.planes[i] = Plane{w, plane_shift(p.bits, i), int(std::gcd(size_t(layout.sr), plane_bytes)), offset};
    offset += plane_bytes;
  }
  g.scales_offset = offset;
  g.zeros_offset = offset + size_t(layout.nr) * scale_bytes(sf);
  g.record_bytes = g.zeros_offset + (p.has_zeros ? size_t(layout.nr) : 0);
  g.panel_bytes = g.record_bytes * g.groups;
  size_t end = g.panel_bytes * g.panels;
  if (layout.col_sums) {
    g.sum_block = col_sum_block(p.group_size);
    g.sums_per_group = p.group_size / g.sum_block;
    if (version == 1) {  // each panel: records, its sums, both 64-byte aligned
      g.sums_offset = align64(g.panel_bytes);
      g.panel_bytes = align64(g.sums_offset + g.panel_sums_bytes());
      g.sums_stride = g.panel_bytes;
      end = g.panel_bytes * g.panels;
    } else {  // every panel's records, then every panel's sums
      g.sums_offset = align64(end);
      g.sums_stride = g.panel_sums_bytes();
      end = g.sums_offset + g.sums_stride * g.panels;
    }
  }
  g.bias_offset = align64(end);  // floats, aligned
  g.payload_bytes = g.bias_offset + (p.has_bias ? size_t(g.n_padded) * 4 : 0);
  return g;
}

void pack_payload(const PackedGeometry& g, const int8_t* qvals, const float* scales,
                  const int8_t* zeros, const float* bias, uint8_t* out) {
  const int k = g.groups * g.group_size;
  const int offset = 1 << (g.bits - 1);
  std::vector<uint8_t> stream(g.stream_bytes);
  for (int p = 0; p < g.panels; ++p) {
    for (int grp = 0; grp < g.groups; ++grp) {
      uint8_t* rec = out + g.record_offset(p, grp);
      for (int kb = 0; kb < g.group_size / g.kr; ++kb)
        for (int c = 0; c < g.nr; ++c)
          for (int j = 0; j < g.kr; ++j) {
            const int col = p * g.nr + c;
            const int kk = grp * g.group_size + kb * g.kr + j;
            const int q = col < g.n ? qvals[size_t(col) * k + kk] : -offset;
            stream[(size_t(kb) * g.nr + c) * g.kr + j] = uint8_t(q + offset);
          }
      for_each_field(g, [&](size_t idx, size_t byte, int bit, int shift, unsigned mask) {
        rec[byte] |= uint8_t(((stream[idx] >> shift) & mask) << bit);
      });
      for (int c = 0; c < g.nr; ++c) {
        const int col = p * g.nr + c;
        const float s = col < g.n ? scales[size_t(col) * g.groups + grp] : 0.0f;
        if (g.scale_format == ScaleFormat::bf16) {
          const uint16_t h = uint16_t(f32_bits(s) >> 16);
          std::memcpy(rec + g.scales_offset + 2 * g.scale_slot(c), &h, 2);
        } else {
          std::memcpy(rec + g.scales_offset + 4 * c, &s, 4);
        }
        if (g.has_zeros)
          rec[g.zeros_offset + c] =
              uint8_t(col < g.n ? zeros[size_t(col) * g.groups + grp] : 0);
      }
      if (g.sum_block > 0) col_sums(g, rec, out + g.sums_entry(p, grp, 0));
    }
  }
  if (g.has_bias) std::memcpy(out + g.bias_offset, bias, size_t(g.n) * 4);
}

void verify_col_sums(const PackedGeometry& g, const uint8_t* payload) {
  if (g.sum_block == 0) return;
  std::vector<uint8_t> want(size_t(g.sums_per_group) * g.nr * 4);
  for (int p = 0; p < g.panels; ++p)
    for (int grp = 0; grp < g.groups; ++grp) {
      col_sums(g, payload + g.record_offset(p, grp), want.data());
      if (std::memcmp(want.data(), payload + g.sums_entry(p, grp, 0),
                      want.size()) != 0)
        fail(Status::corrupt_data, "packed weights: column sums of panel ", p, " group ", grp,
             " disagree with its weights");
    }
}

void unpack_record(const PackedGeometry& g, const uint8_t* rec, int8_t* q, float* scales,
                   int8_t* zeros) {
  std::vector<uint8_t> stream(g.stream_bytes);
  record_stream(g, rec, stream.data());
  const int offset = 1 << (g.bits - 1);
  for (int kb = 0; kb < g.group_size / g.kr; ++kb)
    for (int c = 0; c < g.nr; ++c)
      for (int j = 0; j < g.kr; ++j)
        q[size_t(c) * g.group_size + kb * g.kr + j] =
            int8_t(int(stream[(size_t(kb) * g.nr + c) * g.kr + j]) - offset);
  for (int c = 0; c < g.nr; ++c) {
    if (g.scale_format == ScaleFormat::bf16) {
      uint16_t h;
      std::memcpy(&h, rec + g.scales_offset + 2 * g.scale_slot(c), 2);
      scales[c] = bf16_to_f32(h);
    } else {
      std::memcpy(&scales[c], rec + g.scales_offset + 4 * c, 4);
    }
    zeros[c] = g.has_zeros ? int8_t(rec[g.zeros_offset + c]) : 0;
  }
}

void unpack_payload(const PackedGeometry& g, const uint8_t* payload, int8_t* qvals,
                    float* scales, int8_t* zeros, float* bias) {
  const int n = g.n, k = g.groups * g.group_size;
  std::vector<int8_t> q(g.stream_bytes);
  std::vector<float> s(g.nr);
  std::vector<int8_t> z(g.nr);
  for (int p = 0; p < g.panels; ++p)
    for (int grp = 0; grp < g.groups; ++grp) {
      unpack_record(g, payload + g.record_offset(p, grp), q.data(), s.data(), z.data());
      for (int c = 0; c < g.nr && p * g.nr + c < n; ++c) {
        const size_t col = size_t(p) * g.nr + c;
        std::memcpy(qvals + col * k + size_t(grp) * g.group_size, &q[size_t(c) * g.group_size],
                    g.group_size);
        scales[col * g.groups + grp] = s[c];
        if (zeros != nullptr) zeros[col * g.groups + grp] = z[c];
      }
    }
  if (g.has_bias && bias != nullptr) std::memcpy(bias, payload + g.bias_offset, size_t(n) * 4);
}

}  // namespace lowbit
