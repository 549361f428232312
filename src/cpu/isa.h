// ISA features as one bitset covering x86-64 and AArch64.
//
// A kernel's `requires` set and a profile's `isa` set are both IsaSets; a kernel may run
// iff requires ⊆ isa. Names are the spellings accepted by LOWBIT_ISA and profile specs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

namespace lowbit {

enum class Arch : uint8_t { unknown = 0, x86_64 = 1, arm64 = 2 };

// The architecture this translation unit is compiled for.
constexpr Arch kBuildArch =
#if defined(__x86_64__)
    Arch::x86_64;
#elif defined(__aarch64__)
    Arch::arm64;
#else
    Arch::unknown;
#endif

enum class Isa : uint8_t {
  // x86-64 (baseline x86-64 = SSE2 is implied by Arch::x86_64 and is not a feature).
  sse41,
  avx,
  avx2,
  fma,
  f16c,
  avx512f,
  avx512bw,
  avx512vl,
  avx512dq,
  avx512vnni,
  avx512vbmi,
  avx512bf16,
  avxvnni,
  gfni,
  amx_tile,
  amx_int8,
  // AArch64 (baseline armv8-a includes Advanced SIMD, reported as `neon`).
  neon,
  dotprod,
  i8mm,
  bf16,
  fp16,
  sve,
  sve2,
  sme,
  // Added later. The bit positions above are part of packed headers (a layout's ISA), so a new
  // feature of either architecture goes here, after all the others (isa_arch knows which).
  avx512vpopcntdq,
  count_
};

constexpr int kIsaCount = static_cast<int>(Isa::count_);

class IsaSet {
 public:
  constexpr IsaSet() = default;
  constexpr explicit IsaSet(uint64_t bits) : bits_(bits) {}
  constexpr IsaSet(std::initializer_list<Isa> list) {
    for (Isa i : list) bits_ |= bit(i);
  }
  constexpr bool has(Isa i) const { return (bits_ & bit(i)) != 0; }
  constexpr bool contains(IsaSet o) const { return (bits_ & o.bits_) == o.bits_; }
  constexpr IsaSet missing_from(IsaSet have) const { return IsaSet(bits_ & ~have.bits_); }
  constexpr IsaSet operator|(IsaSet o) const { return IsaSet(bits_ | o.bits_); }
  constexpr IsaSet operator&(IsaSet o) const { return IsaSet(bits_ & o.bits_); }
  constexpr bool operator==(IsaSet o) const { return bits_ == o.bits_; }
  constexpr bool operator!=(IsaSet o) const { return bits_ != o.bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  IsaSet& add(Isa i) { bits_ |= bit(i); return *this; }
  IsaSet& remove(Isa i) { bits_ &= ~bit(i); return *this; }
  constexpr uint64_t bits() const { return bits_; }

  // "avx2+fma+avx512vnni" (empty set: "none").
  std::string to_string() const;

 private:
  static constexpr uint64_t bit(Isa i) { return uint64_t{1} << static_cast<int>(i); }
  uint64_t bits_ = 0;
};

const char* isa_name(Isa i);
// Returns false when `name` is not a feature name.
bool isa_from_name(std::string_view name, Isa* out);
const char* arch_name(Arch a);  // "x86_64", "arm64", "unknown"

// The architecture a feature belongs to.
Arch isa_arch(Isa i);
// Every feature of `a` (for Arch::unknown: every feature).
IsaSet isa_features(Arch a);
// Features imply their prerequisites (avx2 => avx => sse41, avx512vnni => avx512f =>
// avx2,fma,f16c, avxvnni => avx2, i8mm => dotprod => neon, sve2 => sve => neon, ...).
// `s` plus everything its features require.
IsaSet isa_with_prerequisites(IsaSet s);
// `s` minus every feature whose prerequisites are not all in the result (e.g. {avxvnni} -> {}).
IsaSet isa_drop_unmet(IsaSet s);

}  // namespace lowbit
