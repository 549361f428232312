#include "cpu/isa.h"

namespace lowbit {
namespace {

// Indexed by Isa; the spellings of LOWBIT_ISA and profile specs.
constexpr const char* kIsaNames[kIsaCount] = {
    "sse41",      "avx",        "avx2",       "fma",        "f16c",     "avx512f",
    "avx512bw",   "avx512vl",   "avx512dq",   "avx512vnni", "avx512vbmi", "avx512bf16",
    "avxvnni",    "gfni",       "amx_tile",   "amx_int8",   "neon",     "dotprod",
    "i8mm",       "bf16",       "fp16",       "sve",        "sve2",     "sme",
    "avx512vpopcntdq",
};

// Direct prerequisites of each feature. Some are stricter than the architecture manuals
// (avx512f => f16c, i8mm => dotprod), but every real CPU satisfies them and kernels may rely
// on them. SME does not imply SVE (Apple M4 has SME without SVE).
constexpr IsaSet kPrereq[kIsaCount] = {
    /* sse41      */ {},
    /* avx        */ {Isa::sse41},
    /* avx2       */ {Isa::avx},
    /* fma        */ {Isa::avx},
    /* f16c       */ {Isa::avx},
    /* avx512f    */ {Isa::avx2, Isa::fma, Isa::f16c},
    /* avx512bw   */ {Isa::avx512f},
    /* avx512vl   */ {Isa::avx512f},
    /* avx512dq   */ {Isa::avx512f},
    /* avx512vnni */ {Isa::avx512f},
    /* avx512vbmi */ {Isa::avx512f},
    /* avx512bf16 */ {Isa::avx512f},
    /* avxvnni    */ {Isa::avx2},
    /* gfni       */ {Isa::sse41},
    /* amx_tile   */ {},
    /* amx_int8   */ {Isa::amx_tile},
    /* neon       */ {},
    /* dotprod    */ {Isa::neon},
    /* i8mm       */ {Isa::dotprod},
    /* bf16       */ {Isa::neon},
    /* fp16       */ {Isa::neon},
    /* sve        */ {Isa::neon},
    /* sve2       */ {Isa::sve},
    /* sme        */ {Isa::neon},
    /* avx512vpopcntdq */ {Isa::avx512f},
};

}  // namespace

std::string IsaSet::to_string() const {
  std::string s;
  for (int i = 0; i < kIsaCount; ++i) {
    if (!has(static_cast<Isa>(i))) continue;
    if (!s.empty()) s += '+';
    s += kIsaNames[i];
  }
  return s.empty() ? "none" : s;
}

const char* isa_name(Isa i) {
  int k = static_cast<int>(i);
  return k >= 0 && k < kIsaCount ? kIsaNames[k] : "invalid";
}

bool isa_from_name(std::string_view name, Isa* out) {
  for (int i = 0; i < kIsaCount; ++i) {
    if (name == kIsaNames[i]) {
      *out = static_cast<Isa>(i);
      return true;
    }
  }
  return false;
}

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::x86_64: return "x86_64";
    case Arch::arm64: return "arm64";
    default: return "unknown";
  }
}

Arch isa_arch(Isa i) { return i < Isa::neon || i >= Isa::avx512vpopcntdq ? Arch::x86_64 : Arch::arm64; }

IsaSet isa_features(Arch a) {
  IsaSet s;
  for (int i = 0; i < kIsaCount; ++i) {
    Isa f = static_cast<Isa>(i);
    if (a == Arch::unknown || isa_arch(f) == a) s.add(f);
  }
  return s;
}

IsaSet isa_with_prerequisites(IsaSet s) {
  for (IsaSet prev; prev != s;) {  // chains are short; iterate to a fixpoint
    prev = s;
    for (int i = 0; i < kIsaCount; ++i)
      if (s.has(static_cast<Isa>(i))) s = s | kPrereq[i];
  }
  return s;
}

IsaSet isa_drop_unmet(IsaSet s) {
  for (IsaSet prev; prev != s;) {
    prev = s;
    for (int i = 0; i < kIsaCount; ++i)
      if (s.has(static_cast<Isa>(i)) && !s.contains(kPrereq[i])) s.remove(static_cast<Isa>(i));
  }
  return s;
}

}  // namespace lowbit
