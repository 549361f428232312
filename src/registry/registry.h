// The kernel registry: every micro-kernel declared once, as data (DESIGN §4).
//
// Selection reads these descriptors (and costs looked up by kernel name); adding a kernel is
// one source file plus one entry in registry.cpp. Kernels sharing a layout share its packing (format/layout.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cpu/isa.h"
#include "cpu/profile.h"
#include "format/layout.h"
#include "format/row_quant.h"
#include "registry/kernel.h"

namespace lowbit {

constexpr uint16_t kEveryRowCount = 0xFFFF;
constexpr uint16_t row_counts(std::initializer_list<int> rows) {
  uint16_t m = 0;
  for (int r : rows) m |= uint16_t(1u << (r - 1));
  return m;
}

// What a kernel *is*. What it costs on a CPU is not here: select/kernel_cost.h (the generic
// table) and tuning records (select/tuning.h) give that, looked up by name.
struct KernelDesc {
  const char* name;     // "qa8_qw4_gemm_4x16c4__avx512vnni": op, tile mr x nr c kr, ISA
  uint16_t layout_id;   // the packed-weights layout it reads
  IsaSet requires;      // ISA features it executes
  int mr;               // rows per LHS block (m_step)
  LhsFormat lhs;        // LHS packing it reads (lhs.mr == mr)
  uint16_t bits_mask;   // bit b set: supports b-bit weights
  bool zeros, bias;     // supports zero points / bias
  // Bit r-1 set: a block of r rows runs code for exactly r rows. Any other count runs (and
  // costs) the next larger set count, e.g. {1, 2, 4}: 3 rows cost 4.
  uint16_t row_variants;
  // Bit b set: at b-bit weights every row count 1..mr has its own code, whatever
  // row_variants says (the x86 GEMMs' 4-bit fast paths).
  uint16_t every_row_bits;
  UKernelFn fn;         // nullptr: a kernel of another architecture (described, not built)
  // It reads only the records of its layout's panels, not their column sums (the x86 GEMVs
  // that stream weights from DRAM): fewer bytes than the panels hold.
  bool skips_sums = false;
  // The row quantizer its ISA runs when packing its LHS (ops/lhs_pack.h); the same bits as
  // the baseline quantize_row, which nullptr means.
  RowQuantizeFn quantize = nullptr;
  // Likewise the lookup-table builder of a table-lookup kernel (lut_tables below).
  LutTablesFn tables = nullptr;
  // > 0: it prefetches its weight streams UKernelArgs::prefetch_bytes ahead, and this is the
  // distance it runs at unless the tuning record measured another (`lowbit tune`).
  uint32_t prefetch_bytes = 0;

  // A table row that reads on its own (registry.cpp), e.g.
  //   KernelDesc::named("qa8_qw_gemv_1x16c4__avx512vnni", fn)
  //       .reads(layout_id::x86_avx512_n16k4s64_sums).requires_isa(kX86Avx512Vnni)
  //       .tile(1, 4).widths(kAllBits).supports(kZeroPoints | kBias)
  //       .code_for_rows(kEveryRowCount).streams_records_only().prefetches_ahead(2048).quantizer(q)
  // (a table-lookup kernel adds .lut_tables(fn)).
  static KernelDesc named(const char* name, UKernelFn fn) {
    KernelDesc k{};
    k.name = name, k.fn = fn;
    return k;
  }
  KernelDesc reads(uint16_t layout) const { return with([&](KernelDesc& k) { k.layout_id = layout; }); }
  KernelDesc requires_isa(IsaSet isa) const { return with([&](KernelDesc& k) { k.requires = isa; }); }
  // mr rows per LHS block, the LHS packed with k-interleave lhs_kr (the layout's kr).
  KernelDesc tile(int rows, int lhs_kr) const {
    return with([&](KernelDesc& k) { k.mr = rows, k.lhs = LhsFormat{rows, lhs_kr, k.lhs.kind}; });
  }
  // Its LHS holds lookup tables instead of the values (format/lhs_layout.h, LhsKind::lut4), built
  // by `fn` (nullptr: the baseline lut_tables): the table-lookup kernels, on layouts of lut_k4
  // indices.
  KernelDesc lut_tables(LutTablesFn fn) const {
    return with([&](KernelDesc& k) { k.lhs.kind = LhsKind::lut4, k.tables = fn; });
  }
  KernelDesc widths(uint16_t mask) const { return with([&](KernelDesc& k) { k.bits_mask = mask; }); }
  KernelDesc supports(unsigned options) const {
    return with([&](KernelDesc& k) { k.zeros = options & 1u, k.bias = options & 2u; });
  }
  KernelDesc code_for_rows(uint16_t variants) const {
    return with([&](KernelDesc& k) { k.row_variants = variants; });
  }
  KernelDesc every_row_at_widths(uint16_t mask) const {
    return with([&](KernelDesc& k) { k.every_row_bits = mask; });
  }
  KernelDesc streams_records_only() const { return with([&](KernelDesc& k) { k.skips_sums = true; }); }
  KernelDesc quantizer(RowQuantizeFn q) const { return with([&](KernelDesc& k) { k.quantize = q; }); }
  KernelDesc prefetches_ahead(uint32_t bytes) const { return with([&](KernelDesc& k) { k.prefetch_bytes = bytes; }); }

 private:
  template <class F>
  KernelDesc with(F&& f) const {
    KernelDesc k = *this;
    f(k);
    return k;
  }
};
// What KernelDesc::supports takes: optional parts of the operation a kernel implements.
constexpr unsigned kZeroPoints = 1u, kBias = 2u;

constexpr uint16_t bits_mask(std::initializer_list<int> bits) {
  uint16_t m = 0;
  for (int b : bits) m |= uint16_t(1u << b);
  return m;
}
constexpr uint16_t kAllBits = bits_mask({1, 2, 3, 4, 5, 6, 7, 8});

// Whether a block of `rows` rows of `bits`-bit weights runs code for exactly that many rows.
constexpr bool has_row_variant(const KernelDesc& kd, int rows, int bits) {
  return (kd.every_row_bits >> bits & 1u) || (kd.row_variants >> (rows - 1) & 1u);
}

// What a kernel is, as text (name, layout name and id, ISA, mr, LHS format, bits, row variants:
// the rows the fitted per-row costs count), and its
// 64-bit FNV-1a hash in hex: a tuning record's coefficients for a kernel apply only while this
// is unchanged (docs/tuning.md).
std::string kernel_identity(const KernelDesc& kd, const LayoutDesc& layout);
std::string identity_hash(const std::string& text);

class Registry {
 public:
  // Validates: unique names, known layouts, mr >= 1 and lhs.mr == mr, kr dividing 16 and equal
  // to the layout's kr, mr increasing per layout (equal only across ISA tiers), a function pointer. Throws
  // Error(internal) naming the bad descriptor.
  Registry(std::vector<KernelDesc> kernels, std::vector<const LayoutDesc*> layouts);

  const std::vector<KernelDesc>& kernels() const { return kernels_; }
  const std::vector<const LayoutDesc*>& layouts() const { return layouts_; }
  const LayoutDesc* layout(uint16_t id) const;
  const KernelDesc* kernel(const std::string& name) const;
  // Kernels reading `layout_id`, in increasing mr.
  std::vector<const KernelDesc*> kernels_for(uint16_t layout_id) const;
  // Hash of every kernel's identity and zeros/bias, in order: the candidate set
  // a tuning record's plan overrides were measured against.
  const std::string& fingerprint() const { return fingerprint_; }
  // identity_hash(kernel_identity(kd, its layout)), computed once.
  const std::string& identity(const KernelDesc& kd) const;

 private:
  std::vector<KernelDesc> kernels_;
  std::vector<const LayoutDesc*> layouts_;
  std::vector<std::string> identities_;  // per kernel
  std::string fingerprint_;
};

// The built-in registry for this build's architecture (validated once, on first use).
const Registry& default_registry();

}  // namespace lowbit
