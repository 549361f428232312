// AVX2 ceilings: streaming reads, the vpmaddubsw peak and the `_sums` GEMV's operation mix (see
// ceilings.h).
#include <immintrin.h>

#include <utility>

#include "ceilings.h"

namespace lowbit::bench {

namespace {
uint64_t fold(__m256i v) {
  const __m128i x = _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  return uint64_t(_mm_cvtsi128_si64(x)) ^ uint64_t(_mm_extract_epi64(x, 1));
}
}  // namespace

uint64_t stream_avx2(const uint8_t* p, size_t bytes, int shape) {
  auto ld = [](const uint8_t* q) { return _mm256_load_si256(reinterpret_cast<const __m256i*>(q)); };
  __m256i a[8];
  for (auto& v : a) v = _mm256_setzero_si256();
  if (shape == 0) {
    for (size_t i = 0; i < bytes; i += 128)
      a[0] = _mm256_xor_si256(a[0], _mm256_xor_si256(_mm256_xor_si256(ld(p + i), ld(p + i + 32)),
                                                     _mm256_xor_si256(ld(p + i + 64), ld(p + i + 96))));
  } else if (shape == 1) {
    const size_t q = bytes / 4;
    for (size_t i = 0; i < q; i += 64)
      for (int s = 0; s < 4; ++s)
        a[0] = _mm256_xor_si256(a[0], _mm256_xor_si256(ld(p + s * q + i), ld(p + s * q + i + 32)));
  } else if (shape == 2) {
    for (size_t i = 0; i < bytes; i += 128) {
      a[0] = _mm256_xor_si256(a[0], _mm256_xor_si256(ld(p + i), ld(p + i + 32)));
      a[1] = _mm256_xor_si256(a[1], _mm256_xor_si256(ld(p + i + 64), ld(p + i + 96)));
    }
  } else {
    for (size_t i = 0; i < bytes; i += 256)
      for (int j = 0; j < 8; ++j) a[j] = _mm256_xor_si256(a[j], ld(p + i + 32 * j));
  }
  for (int j = 1; j < 8; ++j) a[0] = _mm256_xor_si256(a[0], a[j]);
  return fold(a[0]);
}

namespace {
uint64_t lane(__m256i v) { return uint64_t(_mm256_extract_epi64(v, 0)); }
}  // namespace

uint64_t dot_peak_avx2(int64_t iters) {
  // 12 independent chains in registers; asm so the compiler cannot hoist or merge them.
  __m256i a0 = _mm256_set1_epi8(3), a1 = _mm256_set1_epi8(3), a2 = _mm256_set1_epi8(3), a3 = _mm256_set1_epi8(3), a4 = _mm256_set1_epi8(3), a5 = _mm256_set1_epi8(3), a6 = _mm256_set1_epi8(3), a7 = _mm256_set1_epi8(3), a8 = _mm256_set1_epi8(3), a9 = _mm256_set1_epi8(3), a10 = _mm256_set1_epi8(3), a11 = _mm256_set1_epi8(3);
  const __m256i x = _mm256_set1_epi8(3);
  for (int64_t i = 0; i < iters; ++i) {
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a0) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a1) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a2) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a3) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a4) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a5) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a6) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a7) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a8) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a9) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a10) : "x"(x));
    __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(a11) : "x"(x));
  }
  return lane(a0) ^ lane(a1) ^ lane(a2) ^ lane(a3) ^ lane(a4) ^ lane(a5) ^ lane(a6) ^ lane(a7) ^ lane(a8) ^ lane(a9) ^ lane(a10) ^ lane(a11);
}

namespace {
// The vector operations of one group step of the AVX2 `_sums` GEMV (4-bit, g32, four panels
// of 8 columns: 1024 MACs; docs/x86-kernels.md, "AVX2 cached decode"), in its order: four
// rounds of one packed vector per panel (4 vpand low nibbles, 4 vpsrlw + 4 vpand high
// nibbles, 8 vpmaddubsw, 7 vpaddw into the int16 partials), then per panel 2 vpmaddwd
// (partials, column-sum pair product), 1 vpaddd, 1 vcvtdq2ps, 1 vfmadd. Loads left out.
enum Op { kAnd, kShift, kMaddubs, kAddW, kMaddWd, kAddD, kCvt, kFma };
constexpr int kRounds = 4, kRoundOps = 4 + 4 + 4 + 8 + 7, kEndOps = 4 * (2 + 1 + 1 + 1);
constexpr int kMixOps = kRounds * kRoundOps + kEndOps;  // 128
constexpr Op mix_op(int i) {
  if (i < kRounds * kRoundOps) {
    const int j = i % kRoundOps;
    return j < 4 ? kAnd : j < 8 ? kShift : j < 12 ? kAnd : j < 20 ? kMaddubs : kAddW;
  }
  const int j = i - kRounds * kRoundOps;
  return j < 8 ? kMaddWd : j < 12 ? kAddD : j < 16 ? kCvt : kFma;
}
template <Op O>
inline __attribute__((always_inline)) void mix_apply(__m256i& v, __m256i x) {
  // One asm per instruction: the compiler can neither merge nor drop them.
  if constexpr (O == kAnd) __asm__ volatile("vpand %1, %0, %0" : "+x"(v) : "x"(x));
  if constexpr (O == kShift) __asm__ volatile("vpsrlw $4, %0, %0" : "+x"(v));
  if constexpr (O == kMaddubs) __asm__ volatile("vpmaddubsw %1, %0, %0" : "+x"(v) : "x"(x));
  if constexpr (O == kAddW) __asm__ volatile("vpaddw %1, %0, %0" : "+x"(v) : "x"(x));
  if constexpr (O == kMaddWd) __asm__ volatile("vpmaddwd %1, %0, %0" : "+x"(v) : "x"(x));
  if constexpr (O == kAddD) __asm__ volatile("vpaddd %1, %0, %0" : "+x"(v) : "x"(x));
  if constexpr (O == kCvt) __asm__ volatile("vcvtdq2ps %0, %0" : "+x"(v));
  if constexpr (O == kFma) __asm__ volatile("vfmadd231ps %1, %1, %0" : "+x"(v) : "x"(x));
}
template <int... I>
inline __attribute__((always_inline)) void mix_step(__m256i (&r)[15], __m256i x, std::integer_sequence<int, I...>) {
  static_assert(sizeof...(I) == 128, "one group step's vector operations");
  // Operation i on register i mod 15: chains of 8 or 9 operations per step, shorter than the
  // step, so only the pipes limit it.
  (mix_apply<mix_op(I)>(r[I % 15], x), ...);
}
}  // namespace

uint64_t sums_gemv_mix_avx2(int64_t steps) {
  __m256i r[15];
  for (auto& v : r) v = _mm256_set1_epi8(1);
  const __m256i x = _mm256_set1_epi8(1);
  for (int64_t i = 0; i < steps; ++i) mix_step(r, x, std::make_integer_sequence<int, kMixOps>{});
  uint64_t sum = 0;
  for (const __m256i& v : r) sum ^= lane(v);
  return sum;
}

}  // namespace lowbit::bench
