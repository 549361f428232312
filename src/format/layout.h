// Layout families of packed weights and the one generic packer they all share.
//
// Payload = panels of `nr` columns (n padded up to a multiple of nr), each a sequence of one
// record per group g = 0..G-1, the panels back to back; then, in column-sum layouts, every
// panel's column sums (64-byte aligned, panel after panel); then the bias (f32 [n_padded],
// 64-byte aligned) when the weights have one. Format version 1 kept each panel's column sums
// right after its records (panels 64-byte aligned): a decode GEMV, which does not read them,
// then met a hole in its stream at every panel, and the cache's stream prefetcher restarted
// there (docs/x86-kernels.md, "Decode from DRAM"). Version-1 buffers still load (converted).
//
// Record (panel p, group g):
//   planes   the group's weights as a stream S of L = nr*group_size bytes, u = q + 2^(bits-1)
//            (unsigned, 0..2^bits-1), ordered S[(kb*nr + c)*kr + j] = u[col p*nr+c][g*gs + kb*kr + j],
//            split into bit planes of width 8, 4, 2 or 1 (bits = Σ widths, low bits first:
//            8=[8] 7=[4,2,1] 6=[4,2] 5=[4,1] 4=[4] 3=[2,1] 2=[2] 1=[1]). A plane of width w holds
//            f = 8/w values per byte: the stream is cut into chunks of C*f values (C = chunk
//            bytes, see chunk_bytes()), and byte j of a chunk holds values s*C + j, s = 0..f-1,
//            at bit s*w. C = sr gives SIMD kernels whole vectors per shift-and-mask.
//   scales   nr × f32, or nr × bf16 when the header says so (only if all are bf16-exact)
//   zeros    nr × int8, when has_zeros
//
// Table-lookup layouts (encoding lut_k4) hold the same weights as one-bit planes of 4-k
// nibbles instead, the indices of table-lookup kernels (docs/lut-kernels.md): per k8 step t of
// the group and bit p of u (0..bits-1), nr bytes; byte lut_byte(c) belongs to column c, its
// low nibble holds bit p of u at k = 8t..8t+3 (bit j for k = 8t+j), its high nibble at k =
// 8t+4..8t+7. With W = nr/4 and c = rW + i (4 runs r of W columns), lut_byte(c) =
// 16·(i/4) + 8·(r/2) + 2·(i%4) + r%2: the order in which a kernel that interleaves two byte
// vectors per 16-byte lane (vpunpckl/hbw) and then splits 32-bit lanes into halves gets whole
// runs of columns. bf16 scales are stored in the order of those halves: column rW + i at slot
// 2W·(r/2) + 2i + r%2 (scale_slot), f32 scales and zero points in column order.
//
// Two more named options change what the record holds (both off by default, as above):
//   twos_complement     the stream holds q as a b-bit two's complement (q mod 2^b) instead of
//                       u: a field at the top of a byte, masked, is 2^(8-b)·q (b = its width)
//                       with no offset to correct.
//   odd_width_steps     3, 5, 6 and 7 bits without bit planes: the stream is cut in steps of
//                       8·16 values (8 "vectors" of 16), and step t is b chunks of 16 bytes at
//                       16·b·t. Byte j of chunk c holds value j of vector c (b >= 5: in bits
//                       8-b..7) or of vectors 2c and 2c+1 (b = 3: bits 5-7 and 0-2); the bits
//                       left over hold the step's other vectors, as step_bit() places them.
//                       A kernel masks a whole vector out of one chunk and assembles the others
//                       with a few shift-and-inserts (src/kernels/arm/signed_layout.h).
//                       1, 2, 4 and 8 bits are one plane, which is already this arrangement.
//
// Column sums (layouts with col_sums), per panel: for every group and every sum block s of it (sum_block k values, see col_sum_block()), nr int32
// lanes, lane c = Su | cz << 16 as two int16: Su = Σ u over the block's k values of column c,
// cz = 2^(bits-1) + zw (zw = 0 without zero points). Kernels read them with the LHS pairs
// (-zx, -Ex) of format/lhs_layout.h: one 16-bit pair dot product per block gives
// -zx·Su - cz·Ex, the whole zero-point correction of DESIGN §1. The sums are derived from the
// records (unpack ignores them; repack rewrites them).
// ColSumForm::scaled (twos_complement layouts) keeps the entry size but holds, per block, nr
// int16 S = 2^(8-bits)·Σ q then nr int16 Z = 2^(8-bits)·zw: kernels that multiply q top-aligned
// in a byte (2^(8-bits)·q) start a block's accumulator at S·(-zx) + Z·(-Ex) (two 16-bit
// multiplies by the LHS pair's halves) and hold 2^(8-bits)·d_block at its end. Both fit int16:
// |S| <= 128·sum_block <= 2^14 and |Z| <= 2^14.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cpu/isa.h"
#include "format/problem.h"
#include "lowbit/lowbit.hpp"

namespace lowbit {

// How a record holds its group's weights: bit planes of widths 8/4/2/1 (the dot-product
// kernels), or one-bit planes of 4-k nibbles (the table-lookup kernels' indices).
enum class WeightEncoding : uint8_t { planes, lut_k4 };
// What the column sums of a col_sums layout hold (see above).
enum class ColSumForm : uint8_t { offset_pairs, scaled };

// odd_width_steps: where bit i (0 = lowest) of vector v's values lives in a step of a
// b-bit record (b = 3, 5, 6, 7): chunk `chunk` of the step, at `bit` of each byte.
struct StepBit {
  int chunk, bit;
};
constexpr StepBit step_bit(int bits, int v, int i) {
  if (bits == 3) {
    if (v < 6) return {v / 2, v % 2 == 0 ? 5 + i : i};
    return i == 0 ? StepBit{2, v - 3} : StepBit{v - 6, 2 + i};  // bits 3-4 of chunks 0-2
  }
  if (v < bits) return {v, 8 - bits + i};
  if (bits == 7) return {6 - i, 0};
  if (bits == 6) return {(v == 6 ? 2 : 5) - i / 2, i % 2};
  // bits == 5: vectors 5 and 6 take 3 + 2 bits of chunks 0-1 and 2-3, vector 7 the rest.
  if (v < 7) return i < 2 ? StepBit{2 * (v - 5) + 1, i} : StepBit{2 * (v - 5), i - 2};
  return i < 2 ? StepBit{3 - 2 * i, 2} : StepBit{4, i - 2};
}

struct LayoutDesc {
  uint16_t id = 0;          // stable on-disk id; never reused (format/layouts.h, layout_id)
  const char* name = "";    // e.g. "x86_avx512_n16k4s64"
  Arch arch = Arch::unknown;  // Arch::unknown: runs anywhere
  IsaSet isa;               // the ISA the layout is packed for (recorded in headers)
  int nr = 1, kr = 1, sr = 1;  // columns per panel, k-interleave, plane chunk bytes
  bool bf16_scales = false;  // may store scales as bf16 when every scale is bf16-exact
  bool col_sums = false;     // the payload holds column sums (see above)
  WeightEncoding encoding = WeightEncoding::planes;
  ColSumForm col_sum_form = ColSumForm::offset_pairs;
  bool twos_complement = false;  // fields hold q mod 2^b, not u (see above)
  bool odd_width_steps = false;  // 3, 5, 6, 7 bits in steps, not bit planes (see above)

  // A table row that reads on its own (format/layouts.cpp):
  //   LayoutDesc::family(id, name, arch, isa).panel(nr, kr, sr).bf16_scales_when_exact()
  static constexpr LayoutDesc family(uint16_t id, const char* name, Arch arch, IsaSet isa) {
    LayoutDesc l;
    l.id = id, l.name = name, l.arch = arch, l.isa = isa;
    return l;
  }
  constexpr LayoutDesc panel(int columns, int k_interleave, int chunk_bytes) const {
    LayoutDesc l = *this;
    l.nr = columns, l.kr = k_interleave, l.sr = chunk_bytes;
    return l;
  }
  constexpr LayoutDesc bf16_scales_when_exact() const {
    LayoutDesc l = *this;
    l.bf16_scales = true;
    return l;
  }
  constexpr LayoutDesc with_col_sums(ColSumForm form = ColSumForm::offset_pairs) const {
    LayoutDesc l = *this;
    l.col_sums = true;
    l.col_sum_form = form;
    return l;
  }
  // Signed top-aligned fields: twos_complement and odd_width_steps (see above; nr·16 a
  // multiple of 128, so every record is whole steps).
  constexpr LayoutDesc signed_fields_in_steps() const {
    LayoutDesc l = *this;
    l.twos_complement = true;
    l.odd_width_steps = true;
    return l;
  }
  // Weights as table-lookup indices (lut_k4, above); kr must be 4 and nr a multiple of 16.
  constexpr LayoutDesc lut_indices() const {
    LayoutDesc l = *this;
    l.encoding = WeightEncoding::lut_k4;
    return l;
  }
};

// k values per column-sum block of a group: the largest multiple of 16 (of 32 when the group
// size is one) dividing group_size that is at most 128, so |Su| <= 255·128 and
// |Ex| <= 255·128 fit in int16 and every block is whole plane chunks (kernels unpack by block).
constexpr int kMaxSumBlock = 128;
int col_sum_block(int group_size);

// The bit planes of a b-bit stream: widths 8, 4, 2, 1 taken greedily, low bits first
// (8=[8] 7=[4,2,1] 6=[4,2] 5=[4,1] 4=[4] 3=[2,1] 2=[2] 1=[1]); the packer and the kernels
// that unpack in registers share this rule.
constexpr int plane_count(int bits) { return (bits >> 3 & 1) + (bits >> 2 & 1) + (bits >> 1 & 1) + (bits & 1); }
constexpr int plane_width(int bits, int i) {
  for (int w = 8; w >= 1; w /= 2)
    if (bits & w) {
      if (i == 0) return w;
      --i;
    }
  return 0;
}
constexpr int plane_shift(int bits, int i) {
  int s = 0;
  for (int j = 0; j < i; ++j) s += plane_width(bits, j);
  return s;
}

struct Plane {
  int width;  // bits per value: 8, 4, 2 or 1 (a step layout's one "plane": b, see above)
  int shift;  // position of these bits in u
  int chunk;  // C for this plane: gcd(sr, L/f), so every problem fits every layout
  size_t offset;  // byte offset of the plane within the record
};

// Everything needed to address a packed payload, derived from layout + problem + scale format.
struct PackedGeometry {
  int n = 0, nr = 0, kr = 0;
  int n_padded = 0, panels = 0, groups = 0, group_size = 0, bits = 0;
  bool has_zeros = false, has_bias = false;
  bool twos_complement = false, odd_width_steps = false;  // the layout's options (LayoutDesc)
  ColSumForm col_sum_form = ColSumForm::offset_pairs;
  ScaleFormat scale_format = ScaleFormat::f32;
  WeightEncoding encoding = WeightEncoding::planes;
  size_t stream_bytes = 0;  // L
  int num_planes = 0;       // planes encoding only (lut_k4: 0)
  Plane planes[3] = {};
  size_t scales_offset = 0, zeros_offset = 0, record_bytes = 0;
  // Column sums: none when sum_block is 0; else sums_per_group = group_size / sum_block
  // entries of nr int32 per group, panel p's from payload offset sums_offset + p * sums_stride.
  int sum_block = 0, sums_per_group = 0;
  size_t sums_offset = 0, sums_stride = 0;
  size_t panel_bytes = 0;  // from one panel's first record to the next panel's
  size_t bias_offset = 0, payload_bytes = 0;

  // Where column c's scale is within a record's scales, in scales (see above).
  size_t scale_slot(int c) const {
    if (encoding != WeightEncoding::lut_k4 || scale_format != ScaleFormat::bf16) return size_t(c);
    const int w = nr / 4, r = c / w, i = c % w;
    return size_t(2 * w * (r / 2) + 2 * i + r % 2);
  }
  // lut_k4: the byte of an index vector that holds column c of the panel (see above).
  size_t lut_byte(int c) const {
    const int w = nr / 4, r = c / w, i = c % w;
    return size_t(16 * (i / 4) + 8 * (r / 2) + 2 * (i % 4) + r % 2);
  }
  size_t record_offset(int panel, int group) const {
    return size_t(panel) * panel_bytes + size_t(group) * record_bytes;
  }
  // Payload offset of the column sums of sum block `s` of `group` of `panel`.
  size_t sums_entry(int panel, int group, int s) const {
    return sums_offset + size_t(panel) * sums_stride +
           (size_t(group) * size_t(sums_per_group) + size_t(s)) * size_t(nr) * 4;
  }
  size_t panel_sums_bytes() const { return size_t(groups) * size_t(sums_per_group) * size_t(nr) * 4; }
  // Every byte that belongs to one panel (records and column sums): what a kernel reading the
  // column sums reads per panel.
  size_t panel_footprint() const { return size_t(groups) * record_bytes + panel_sums_bytes(); }
};

// The arrangement of the payload: 1 (each panel's column sums after its records) or 2.
constexpr uint16_t kFormatVersion = 2;

PackedGeometry make_geometry(const LayoutDesc& layout, const WeightProblem& p, ScaleFormat sf,
                             uint16_t version = kFormatVersion);

// Packs unpacked weights (qvals [n,k] int8, scales/zeros [n,G], bias [n]) into `out`
// (geometry.payload_bytes, zero-initialised by the caller). Inputs are already validated.
void pack_payload(const PackedGeometry& g, const int8_t* qvals, const float* scales,
                  const int8_t* zeros, const float* bias, uint8_t* out);

// Throws Error(corrupt_data) when a column-sum layout's sums disagree with its records (data
// from outside: a valid checksum does not prove the writer computed them right).
void verify_col_sums(const PackedGeometry& g, const uint8_t* payload);

// Decodes one record: q [nr][group_size] signed values, scales [nr], zeros [nr] (0 if none).
void unpack_record(const PackedGeometry& g, const uint8_t* record, int8_t* q, float* scales,
                   int8_t* zeros);

// Inverse of pack_payload (for repack and tools): outputs sized as for pack_payload.
void unpack_payload(const PackedGeometry& g, const uint8_t* payload, int8_t* qvals,
                    float* scales, int8_t* zeros, float* bias);

}  // namespace lowbit
