#include "registry/registry.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "format/layouts.h"
#include "kernels/arm/kernels.h"
#include "kernels/ref/qa8_qw_gemm_x1c1__scalar.h"
#include "util/error.h"
#if defined(__x86_64__)
#include "kernels/x86/kernels.h"
#endif


namespace lowbit {

Registry::Registry(std::vector<KernelDesc> kernels, std::vector<const LayoutDesc*> layouts)
    : kernels_(std::move(kernels)), layouts_(std::move(layouts)) {
  std::set<std::string> names;
  for (const KernelDesc& k : kernels_) {
    const std::string name = k.name ? k.name : "";
    if (name.empty()) fail(Status::internal, "registry: a kernel has no name");
    if (!names.insert(name).second) fail(Status::internal, "registry: duplicate kernel name ", name);
    const LayoutDesc* l = layout(k.layout_id);
    if (l == nullptr) fail(Status::internal, "registry: kernel ", name, " reads unknown layout ", k.layout_id);
    // Kernels of other architectures are described (so weights can be packed for them) but
    // have no code in this build.
    if (k.fn == nullptr && (l->arch == Arch::unknown || l->arch == kBuildArch))
      fail(Status::internal, "registry: kernel ", name, " has no function");
    if (k.mr < 1 || k.lhs.mr != k.mr)
      fail(Status::internal, "registry: kernel ", name, ": mr ", k.mr, " and lhs.mr ", k.lhs.mr,
           " must agree and be >= 1");
    if (k.lhs.kr < 1 || 16 % k.lhs.kr != 0)
      fail(Status::internal, "registry: kernel ", name, ": lhs kr ", k.lhs.kr, " must divide 16");
    if (l->kr < 1 || 16 % l->kr != 0 || l->nr < 1 || l->sr < 1)
      fail(Status::internal, "registry: layout ", l->name, ": kr must divide 16, nr and sr >= 1");
    if ((k.lhs.kind == LhsKind::lut4) != (l->encoding == WeightEncoding::lut_k4))
      fail(Status::internal, "registry: kernel ", name, ": lookup tables go with lut_k4 layouts only (",
           l->name, ")");
    if (l->encoding == WeightEncoding::lut_k4 && (l->kr != 4 || l->nr % 16 != 0))
      fail(Status::internal, "registry: layout ", l->name, ": lut_k4 needs kr 4 and nr a multiple of 16");
    if (!k.requires.contains(l->isa))
      fail(Status::internal, "registry: kernel ", name, " requires ", k.requires.to_string(),
           " but its layout ", l->name, " is packed for ", l->isa.to_string());
    if ((k.bits_mask & kAllBits) == 0 || (k.bits_mask & ~kAllBits) != 0)
      fail(Status::internal, "registry: kernel ", name, ": bad bits mask ", k.bits_mask);
    // A full block always has code; no variant is larger than a block.
    if (k.row_variants != kEveryRowCount &&
        (k.mr > 16 || k.row_variants >> (k.mr - 1) != 1u))
      fail(Status::internal, "registry: kernel ", name, ": row variants ", k.row_variants,
           " must include ", k.mr, " rows and none above (or be kEveryRowCount)");
    if (k.prefetch_bytes % 64 != 0 || k.prefetch_bytes > kMaxPrefetchBytes)
      fail(Status::internal, "registry: kernel ", name, ": prefetch distance ", k.prefetch_bytes,
           " must be a multiple of 64 up to ", kMaxPrefetchBytes);
    if ((k.every_row_bits & ~k.bits_mask) != 0)
      fail(Status::internal, "registry: kernel ", name, ": every-row bit widths ", k.every_row_bits,
           " outside its bits mask ", k.bits_mask);
  }
  // Variants of a layout: mr increasing in declaration order, each dividing the next, so
  // a big-tile segment followed by a small-tile one keeps every block aligned. Kernels may
  // share an mr: ISA tiers (AVX2 and AVX-VNNI on one layout) and alternatives the planner
  // chooses between by cost (a GEMV that streams the records, one that reads the sums).
  for (const LayoutDesc* l : layouts_) {
    int last_mr = 0;
    for (const KernelDesc& k : kernels_) {
      if (k.layout_id != l->id) continue;
      if (k.mr < last_mr || (last_mr > 0 && k.mr % last_mr != 0))
        fail(Status::internal, "registry: kernels of layout ", l->name,
             " must be declared in increasing mr, each a multiple of the previous (",
             k.name, " has mr ", k.mr, " after mr ", last_mr, ")");
      last_mr = k.mr;
    }
  }
  std::string all;
  for (const KernelDesc& k : kernels_) {
    const std::string id = kernel_identity(k, *layout(k.layout_id));
    identities_.push_back(identity_hash(id));
    all += concat(id, "|z", k.zeros, "|b", k.bias, "\n");
  }
  fingerprint_ = identity_hash(all);
}

std::string kernel_identity(const KernelDesc& kd, const LayoutDesc& layout) {
  return concat(kd.name, "|", layout.name, "#", layout.id, "|", kd.requires.to_string(), "|mr", kd.mr,
                "|lhs", kd.lhs.mr, "x", kd.lhs.kr, kd.lhs.kind == LhsKind::lut4 ? "t" : "", "|bits", kd.bits_mask, "|rv", kd.row_variants, "|rb",
                kd.every_row_bits);
}

std::string identity_hash(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

const std::string& Registry::identity(const KernelDesc& kd) const {
  const size_t i = size_t(&kd - kernels_.data());
  if (i >= kernels_.size()) fail(Status::internal, "registry: ", kd.name, " is not one of its kernels");
  return identities_[i];
}

const LayoutDesc* Registry::layout(uint16_t id) const {
  for (const LayoutDesc* l : layouts_)
    if (l->id == id) return l;
  return nullptr;
}

const KernelDesc* Registry::kernel(const std::string& name) const {
  for (const KernelDesc& k : kernels_)
    if (name == k.name) return &k;
  return nullptr;
}

std::vector<const KernelDesc*> Registry::kernels_for(uint16_t layout_id) const {
  std::vector<const KernelDesc*> out;
  for (const KernelDesc& k : kernels_)
    if (k.layout_id == layout_id) out.push_back(&k);
  return out;
}

namespace {

// Entries of another architecture's kernels carry no function pointer in this build.
#if defined(__x86_64__)
#define LOWBIT_X86(fn) fn
#else
#define LOWBIT_X86(fn) nullptr
#endif
#if defined(__aarch64__)
#define LOWBIT_ARM(fn) fn
#else
#define LOWBIT_ARM(fn) nullptr
#endif

// What each x86 kernel TU is compiled for (src/kernels/x86/sources.cmake).
constexpr IsaSet kX86Avx2{Isa::avx2, Isa::fma, Isa::f16c};
constexpr IsaSet kX86AvxVnni = kX86Avx2 | IsaSet{Isa::avxvnni};
constexpr IsaSet kX86Avx512 = kX86Avx2 | IsaSet{Isa::avx512f, Isa::avx512bw, Isa::avx512vl, Isa::avx512dq};
constexpr IsaSet kX86Avx512Vnni = kX86Avx512 | IsaSet{Isa::avx512vnni};
constexpr IsaSet kX86Avx512VnniGfni = kX86Avx512Vnni | IsaSet{Isa::gfni, Isa::avx512vpopcntdq};
// The x86 decode GEMVs' software-prefetch distance unless a tuning record measured another:
// the fastest from DRAM on Zen 3 and Zen 5 (docs/x86-kernels.md, "Decode from DRAM").
constexpr uint32_t kDecodePrefetch = 2048;

// What each aarch64 kernel TU is compiled for (src/kernels/arm/sources.cmake).
constexpr IsaSet kArmNeon{Isa::neon};
constexpr IsaSet kArmDotprod{Isa::neon, Isa::dotprod};
constexpr IsaSet kArmI8mm{Isa::neon, Isa::dotprod, Isa::i8mm};

std::vector<KernelDesc> builtin_kernels() {
  using K = KernelDesc;
  namespace lid = layout_id;
  constexpr unsigned kAll = kZeroPoints | kBias;
  // What each kernel costs is looked up by name: select/generic_costs.cpp and tuning records.
  std::vector<KernelDesc> k = {
      K::named("qa8_qw_gemm_1x1c1__scalar", qa8_qw_gemm_1x1c1__scalar)
          .reads(lid::portable_n1k1s1).tile(1, 1).widths(kAllBits).supports(kAll)
          .code_for_rows(kEveryRowCount),
      K::named("qa8_qw_gemm_4x1c1__scalar", qa8_qw_gemm_4x1c1__scalar)
          .reads(lid::portable_n1k1s1).tile(4, 1).widths(kAllBits).supports(kAll)
          .code_for_rows(kEveryRowCount),
      // x86-64: per ISA, two GEMVs for decode (one streams the records only, for weights in
      // DRAM; one reads the column sums, for weights in cache) and an MR-row GEMM, on the
      // column-sum layouts (src/kernels/x86, docs/x86-kernels.md). The GEMMs have code for
      // every row count at 4 bits; other widths run partial blocks as 2, 4 or MR rows
      // (kernels/x86/gemm.h with_rows).
      K::named("qa8_qw_gemv_1x8c4__avx2", LOWBIT_X86(qa8_qw_gemv_1x8c4__avx2))
          .reads(lid::x86_avx2_n8k4s32_sums).requires_isa(kX86Avx2).tile(1, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(kEveryRowCount).streams_records_only()
          .prefetches_ahead(kDecodePrefetch)
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      K::named("qa8_qw_gemv_1x8c4_sums__avx2", LOWBIT_X86(qa8_qw_gemv_1x8c4_sums__avx2))
          .reads(lid::x86_avx2_n8k4s32_sums).requires_isa(kX86Avx2).tile(1, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(kEveryRowCount)
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      K::named("qa8_qw_gemv_1x8c4__avxvnni", LOWBIT_X86(qa8_qw_gemv_1x8c4__avxvnni))
          .reads(lid::x86_avx2_n8k4s32_sums).requires_isa(kX86AvxVnni).tile(1, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(kEveryRowCount).streams_records_only()
          .prefetches_ahead(kDecodePrefetch)
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      K::named("qa8_qw_gemv_1x8c4_sums__avxvnni", LOWBIT_X86(qa8_qw_gemv_1x8c4_sums__avxvnni))
          .reads(lid::x86_avx2_n8k4s32_sums).requires_isa(kX86AvxVnni).tile(1, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(kEveryRowCount)
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      K::named("qa8_qw_gemm_4x8c4__avx2", LOWBIT_X86(qa8_qw_gemm_4x8c4__avx2))
          .reads(lid::x86_avx2_n8k4s32_sums).requires_isa(kX86Avx2).tile(4, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(row_counts({2, 4})).every_row_at_widths(bits_mask({4}))
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      K::named("qa8_qw_gemm_4x8c4__avxvnni", LOWBIT_X86(qa8_qw_gemm_4x8c4__avxvnni))
          .reads(lid::x86_avx2_n8k4s32_sums).requires_isa(kX86AvxVnni).tile(4, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(row_counts({2, 4})).every_row_at_widths(bits_mask({4}))
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      // x86-64 table lookup (src/kernels/x86/lut.h, docs/lut-kernels.md): the low widths.
      K::named("qa8_qw_lut_gemv_1x32__avx2", LOWBIT_X86(qa8_qw_lut_gemv_1x32__avx2))
          .reads(lid::x86_avx2_lut_n32k4s32).requires_isa(kX86Avx2).tile(1, 4).lut_tables(LOWBIT_X86(qa8_lut4_tables__avx2))
          .widths(bits_mask({1, 2, 3})).supports(kAll).code_for_rows(kEveryRowCount).prefetches_ahead(kDecodePrefetch)
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      K::named("qa8_qw_lut_gemm_4x32__avx2", LOWBIT_X86(qa8_qw_lut_gemm_4x32__avx2))
          .reads(lid::x86_avx2_lut_n32k4s32).requires_isa(kX86Avx2).tile(4, 4).lut_tables(LOWBIT_X86(qa8_lut4_tables__avx2))
          .widths(bits_mask({1, 2, 3})).supports(kAll).code_for_rows(row_counts({4}))
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      K::named("qa8_qw_gemv_1x16c4__avx512vnni", LOWBIT_X86(qa8_qw_gemv_1x16c4__avx512vnni))
          .reads(lid::x86_avx512_n16k4s64_sums).requires_isa(kX86Avx512Vnni).tile(1, 4)
          .widths(kAllBits).supports(kAll).code_for_rows(kEveryRowCount).streams_records_only()
          .prefetches_ahead(kDecodePrefetch)
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx512vnni)),
      // The same GEMV with GFNI's affine unpacking and its 1-bit column sums by VPOPCNTDQ: Ice
      // Lake / Zen 4 and later (Cascade Lake keeps the one above). The GEMM gains nothing from
      // it (measured 1-4 % slower on Zen 5: its dot products bound it, docs/x86-kernels.md).
      K::named("qa8_qw_gemv_1x16c4__avx512vnnigfni", LOWBIT_X86(qa8_qw_gemv_1x16c4__avx512vnnigfni))
          .reads(lid::x86_avx512_n16k4s64_sums).requires_isa(kX86Avx512VnniGfni).tile(1, 4)
          .widths(kAllBits).supports(kAll).code_for_rows(kEveryRowCount).streams_records_only()
          .prefetches_ahead(kDecodePrefetch)
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx512vnni)),
      K::named("qa8_qw_gemm_8x16c4__avx512vnni", LOWBIT_X86(qa8_qw_gemm_8x16c4__avx512vnni))
          .reads(lid::x86_avx512_n16k4s64_sums).requires_isa(kX86Avx512Vnni).tile(8, 4)
          .widths(kAllBits).supports(kAll).code_for_rows(row_counts({2, 4, 8}))
          .every_row_at_widths(bits_mask({4}))
          .quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx512vnni)),
      // AVX-512 table lookup: the AVX2 quantizer and table builder (no VNNI in their ISA).
      K::named("qa8_qw_lut_gemv_1x64__avx512", LOWBIT_X86(qa8_qw_lut_gemv_1x64__avx512))
          .reads(lid::x86_avx512_lut_n64k4s64).requires_isa(kX86Avx512).tile(1, 4)
          .lut_tables(LOWBIT_X86(qa8_lut4_tables__avx2)).widths(bits_mask({1, 2, 3})).supports(kAll)
          .code_for_rows(kEveryRowCount).prefetches_ahead(kDecodePrefetch).quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      K::named("qa8_qw_lut_gemm_4x64__avx512", LOWBIT_X86(qa8_qw_lut_gemm_4x64__avx512))
          .reads(lid::x86_avx512_lut_n64k4s64).requires_isa(kX86Avx512).tile(4, 4)
          .lut_tables(LOWBIT_X86(qa8_lut4_tables__avx2)).widths(bits_mask({1, 2, 3})).supports(kAll)
          .code_for_rows(row_counts({4})).quantizer(LOWBIT_X86(f32_qa8_quantize_row__avx2)),
      // aarch64 (src/kernels/arm, docs/arm-kernels.md). NEON: a GEMV and a GEMM of all 4 rows.
      // Dot product and i8mm: a GEMV and a GEMM with code for 4 and 8 rows; the _a55 variants
      // (same contract, scheduled for in-order cores) are what per-core plans give little
      // cores, by their costs.
      K::named("qa8_qw_gemv_1x8c1__neon", LOWBIT_ARM(qa8_qw_gemv_1x8c1__neon))
          .reads(lid::arm_neon_n8k1s16).requires_isa(kArmNeon).tile(1, 1).widths(kAllBits)
          .supports(kAll).code_for_rows(kEveryRowCount),
      K::named("qa8_qw_gemm_4x8c1__neon", LOWBIT_ARM(qa8_qw_gemm_4x8c1__neon))
          .reads(lid::arm_neon_n8k1s16).requires_isa(kArmNeon).tile(4, 1).widths(kAllBits)
          .supports(kAll).code_for_rows(row_counts({4})),
      K::named("qa8_qw_gemv_1x16c4__dotprod", LOWBIT_ARM(qa8_qw_gemv_1x16c4__dotprod))
          .reads(lid::arm_dotprod_n8k4s16_sums).requires_isa(kArmDotprod).tile(1, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(kEveryRowCount),
      K::named("qa8_qw_gemv_1x16c4__dotprod_a55", LOWBIT_ARM(qa8_qw_gemv_1x16c4__dotprod_a55))
          .reads(lid::arm_dotprod_n8k4s16_sums).requires_isa(kArmDotprod).tile(1, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(kEveryRowCount),
      K::named("qa8_qw_gemm_8x8c4__dotprod", LOWBIT_ARM(qa8_qw_gemm_8x8c4__dotprod))
          .reads(lid::arm_dotprod_n8k4s16_sums).requires_isa(kArmDotprod).tile(8, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(row_counts({4, 8})),
      K::named("qa8_qw_gemm_8x8c4__dotprod_a55", LOWBIT_ARM(qa8_qw_gemm_8x8c4__dotprod_a55))
          .reads(lid::arm_dotprod_n8k4s16_sums).requires_isa(kArmDotprod).tile(8, 4).widths(kAllBits)
          .supports(kAll).code_for_rows(row_counts({4, 8})),
      K::named("qa8_qw_gemv_1x8c8__i8mm", LOWBIT_ARM(qa8_qw_gemv_1x8c8__i8mm))
          .reads(lid::arm_i8mm_n8k8s16_sums).requires_isa(kArmI8mm).tile(1, 8).widths(kAllBits)
          .supports(kAll).code_for_rows(kEveryRowCount),
      K::named("qa8_qw_gemm_8x8c8__i8mm", LOWBIT_ARM(qa8_qw_gemm_8x8c8__i8mm))
          .reads(lid::arm_i8mm_n8k8s16_sums).requires_isa(kArmI8mm).tile(8, 8).widths(kAllBits)
          .supports(kAll).code_for_rows(row_counts({4, 8})),
  };
  return k;
}

std::vector<const LayoutDesc*> builtin_layouts() {
  std::vector<const LayoutDesc*> out;
  for (const LayoutDesc& l : all_layouts()) out.push_back(&l);
  return out;
}

}  // namespace

const Registry& default_registry() {
  static const Registry r(builtin_kernels(), builtin_layouts());
  return r;
}

}  // namespace lowbit
