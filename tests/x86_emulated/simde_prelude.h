// Included first by every generated emulation TU (tests/CMakeLists.txt): an AVX-512 (F/BW or
// VNNI) or AVX-VNNI kernel file compiled a second time for the baseline ISA, with SIMDe
// (libsimde-dev) standing in for the intrinsics, so test_x86_kernels checks its logic bit for
// bit on machines without that ISA. The TU renames the kernel (emu_ prefix) so it never meets
// the real one, and registers it with emulated_kernels().
#pragma once

#include <immintrin.h>  // first: SIMDe's aliases below must not rewrite GCC's own header

#define SIMDE_ENABLE_NATIVE_ALIASES
#include <simde/x86/avx512.h>
#include <simde/x86/gfni.h>
#include <cmath>
#include <cstring>
#define _mm256_dpbusd_avx_epi32 _mm256_dpbusd_epi32
#define _mm256_dpwssd_avx_epi32 _mm256_dpwssd_epi32

// Intrinsics SIMDe 0.7.4 lacks, written out lane by lane.
namespace emu {
inline bool on(simde__mmask16 k, int i) { return (k >> i) & 1; }
inline simde__m512 maskz_cvtepi32_ps(simde__mmask16 k, simde__m512i a) {
  int32_t in[16];
  float out[16];
  std::memcpy(in, &a, 64);
  for (int i = 0; i < 16; ++i) out[i] = on(k, i) ? float(in[i]) : 0.0f;
  simde__m512 r;
  std::memcpy(&r, out, 64);
  return r;
}
template <class In, class Lane>
inline simde__m512i widen(simde__mmask16 k, In a) {
  Lane in[16];
  int32_t out[16];
  std::memcpy(in, &a, sizeof(in));
  for (int i = 0; i < 16; ++i) out[i] = on(k, i) ? int32_t(in[i]) : 0;
  simde__m512i r;
  std::memcpy(&r, out, 64);
  return r;
}
inline simde__m512i maskz_slli_epi32(simde__mmask16 k, simde__m512i a, unsigned n) {
  return simde_mm512_maskz_mov_epi32(k, simde_mm512_slli_epi32(a, n));
}
inline simde__m512i maskz_srli_epi32(simde__mmask16 k, simde__m512i a, unsigned n) {
  return simde_mm512_maskz_mov_epi32(k, simde_mm512_srli_epi32(a, n));
}
inline simde__m512 maskz_loadu_ps(simde__mmask16 k, const void* p) {
  float out[16];
  for (int i = 0; i < 16; ++i) out[i] = on(k, i) ? static_cast<const float*>(p)[i] : 0.0f;
  simde__m512 r;
  std::memcpy(&r, out, 64);
  return r;
}
inline void mask_storeu_ps(void* p, simde__mmask16 k, simde__m512 v) {
  float in[16];
  std::memcpy(in, &v, 64);
  for (int i = 0; i < 16; ++i)
    if (on(k, i)) static_cast<float*>(p)[i] = in[i];
}
// SIMDe without FMA hardware computes a*b+c with two roundings: the contract needs one.
template <class Vec, int N>
inline Vec fmadd(Vec a, Vec b, Vec c) {
  float x[N], y[N], z[N];
  std::memcpy(x, &a, sizeof(x));
  std::memcpy(y, &b, sizeof(y));
  std::memcpy(z, &c, sizeof(z));
  for (int i = 0; i < N; ++i) z[i] = std::fma(x[i], y[i], z[i]);
  std::memcpy(&c, z, sizeof(z));
  return c;
}
// Round to nearest, ties to even (the default MXCSR mode), as vcvtps2dq does.
inline simde__m512i cvtps_epi32(simde__m512 v) {
  float in[16];
  int32_t out[16];
  std::memcpy(in, &v, 64);
  for (int i = 0; i < 16; ++i) out[i] = int32_t(std::nearbyint(in[i]));
  simde__m512i r;
  std::memcpy(&r, out, 64);
  return r;
}
}  // namespace emu
#undef _mm512_fmadd_ps
#undef _mm256_fmadd_ps
#define _mm512_fmadd_ps(a, b, c) emu::fmadd<simde__m512, 16>(a, b, c)
#define _mm256_fmadd_ps(a, b, c) emu::fmadd<simde__m256, 8>(a, b, c)
#define _mm512_maskz_cvtepi32_ps emu::maskz_cvtepi32_ps
#define _mm512_maskz_cvtepu16_epi32(k, a) emu::widen<simde__m256i, uint16_t>(k, a)
#define _mm512_maskz_cvtepi8_epi32(k, a) emu::widen<simde__m128i, int8_t>(k, a)
#define _mm512_maskz_slli_epi32 emu::maskz_slli_epi32
#define _mm512_maskz_srli_epi32 emu::maskz_srli_epi32
#define _mm512_maskz_loadu_ps emu::maskz_loadu_ps
#define _mm512_mask_storeu_ps emu::mask_storeu_ps
#define _mm512_cvtps_epi32 emu::cvtps_epi32

#include "x86_emulated/registry.h"
