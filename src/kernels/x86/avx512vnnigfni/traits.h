// AVX-512 VNNI with GFNI and VPOPCNTDQ (Ice Lake and later, Zen 4 and later): the AVX-512 VNNI
// traits plus two instructions for the weights a GEMV streams (common.h). vgf2p8affineqb multiplies every byte
// by an 8x8 bit matrix, so one instruction moves a plane's field to its place in u (a shift and
// an and without it); vpopcntd counts the bits of each 32-bit lane, which at 1 bit is the sum of
// the lane's column over a whole load of 8 k-blocks (8 byte adds and a vpmaddubsw without it).
// Include only from translation units built with these flags.
#pragma once

#include "kernels/x86/avx512vnni/traits.h"

namespace lowbit {
namespace x86 {
namespace {

struct Avx512VnniGfni : Avx512Vnni {
  static constexpr bool kAffineUnpack = true, kPopcountSums = true;
  template <uint64_t A>
  static V affine(V x) { return _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(int64_t(A)), 0); }
  static V or_(V a, V b) { return _mm512_or_si512(a, b); }
  static V or3(V a, V b, V c) { return _mm512_ternarylogic_epi32(a, b, c, 0xFE); }
  static V popcount32(V x) { return _mm512_popcnt_epi32(x); }
  static V add32(V a, V b) { return _mm512_add_epi32(a, b); }
};

}  // namespace
}  // namespace x86
}  // namespace lowbit
