// AVX-512 ceilings: 512-bit streaming reads and the 512-bit vpdpbusd peak (see ceilings.h).
#include <immintrin.h>

#include "ceilings.h"

namespace lowbit::bench {

namespace {
uint64_t fold(__m512i v) {
  alignas(64) uint64_t t[8];
  _mm512_store_si512(t, v);
  return t[0] ^ t[1] ^ t[2] ^ t[3] ^ t[4] ^ t[5] ^ t[6] ^ t[7];
}
}  // namespace

uint64_t stream_avx512(const uint8_t* p, size_t bytes, int shape) {
  auto ld = [](const uint8_t* q) { return _mm512_load_si512(q); };
  __m512i a[8];
  for (auto& v : a) v = _mm512_setzero_si512();
  if (shape == 0) {
    for (size_t i = 0; i < bytes; i += 256)
      a[0] = _mm512_xor_si512(a[0], _mm512_xor_si512(_mm512_xor_si512(ld(p + i), ld(p + i + 64)),
                                                     _mm512_xor_si512(ld(p + i + 128), ld(p + i + 192))));
  } else if (shape == 1) {
    const size_t q = bytes / 4;
    for (size_t i = 0; i < q; i += 128)
      for (int s = 0; s < 4; ++s)
        a[0] = _mm512_xor_si512(a[0], _mm512_xor_si512(ld(p + s * q + i), ld(p + s * q + i + 64)));
  } else if (shape == 2) {
    for (size_t i = 0; i < bytes; i += 256) {
      a[0] = _mm512_xor_si512(a[0], _mm512_xor_si512(ld(p + i), ld(p + i + 64)));
      a[1] = _mm512_xor_si512(a[1], _mm512_xor_si512(ld(p + i + 128), ld(p + i + 192)));
    }
  } else {
    for (size_t i = 0; i < bytes; i += 512)
      for (int j = 0; j < 8; ++j) a[j] = _mm512_xor_si512(a[j], ld(p + i + 64 * j));
  }
  for (int j = 1; j < 8; ++j) a[0] = _mm512_xor_si512(a[0], a[j]);
  return fold(a[0]);
}

namespace {
uint64_t lane(__m512i v) { return uint64_t(_mm_cvtsi128_si64(_mm512_castsi512_si128(v))); }
}  // namespace

uint64_t dot_peak_avx512vnni(int64_t iters) {
  // 12 independent chains in registers; asm so the compiler cannot hoist or merge them.
  __m512i a0 = _mm512_set1_epi8(3), a1 = _mm512_set1_epi8(3), a2 = _mm512_set1_epi8(3), a3 = _mm512_set1_epi8(3), a4 = _mm512_set1_epi8(3), a5 = _mm512_set1_epi8(3), a6 = _mm512_set1_epi8(3), a7 = _mm512_set1_epi8(3), a8 = _mm512_set1_epi8(3), a9 = _mm512_set1_epi8(3), a10 = _mm512_set1_epi8(3), a11 = _mm512_set1_epi8(3);
  const __m512i u = _mm512_set1_epi8(3), x = _mm512_set1_epi8(3);
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a0) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a1) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a2) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a3) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a4) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a5) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a6) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a7) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a8) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a9) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a10) : "v"(u), "v"(x));
    __asm__ volatile("vpdpbusd %1, %2, %0" : "+v"(a11) : "v"(u), "v"(x));
  }
  return lane(a0) ^ lane(a1) ^ lane(a2) ^ lane(a3) ^ lane(a4) ^ lane(a5) ^ lane(a6) ^ lane(a7) ^ lane(a8) ^ lane(a9) ^ lane(a10) ^ lane(a11);
}

}  // namespace lowbit::bench
