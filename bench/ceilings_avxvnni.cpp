// AVX-VNNI ceiling: the 256-bit vpdpbusd peak (see ceilings.h).
#include <immintrin.h>

#include "ceilings.h"

namespace lowbit::bench {

namespace {
uint64_t lane(__m256i v) { return uint64_t(_mm256_extract_epi64(v, 0)); }
}  // namespace

uint64_t dot_peak_avxvnni(int64_t iters) {
  // 12 independent chains in registers; asm so the compiler cannot hoist or merge them.
  __m256i a0 = _mm256_set1_epi8(3), a1 = _mm256_set1_epi8(3), a2 = _mm256_set1_epi8(3), a3 = _mm256_set1_epi8(3), a4 = _mm256_set1_epi8(3), a5 = _mm256_set1_epi8(3), a6 = _mm256_set1_epi8(3), a7 = _mm256_set1_epi8(3), a8 = _mm256_set1_epi8(3), a9 = _mm256_set1_epi8(3), a10 = _mm256_set1_epi8(3), a11 = _mm256_set1_epi8(3);
  const __m256i u = _mm256_set1_epi8(3), x = _mm256_set1_epi8(3);
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a0) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a1) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a2) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a3) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a4) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a5) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a6) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a7) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a8) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a9) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a10) : "x"(u), "x"(x));
    __asm__ volatile("%{vex%} vpdpbusd %1, %2, %0" : "+x"(a11) : "x"(u), "x"(x));
  }
  return lane(a0) ^ lane(a1) ^ lane(a2) ^ lane(a3) ^ lane(a4) ^ lane(a5) ^ lane(a6) ^ lane(a7) ^ lane(a8) ^ lane(a9) ^ lane(a10) ^ lane(a11);
}

}  // namespace lowbit::bench
