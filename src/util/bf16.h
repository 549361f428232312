// bf16 <-> f32. Layouts store scales as bf16 only when every scale is exactly representable,
// so the conversion to f32 in kernels is exact and the result contract holds.
#pragma once

#include <cstdint>
#include <cstring>

namespace lowbit {

inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
inline float bf16_to_f32(uint16_t h) { return f32_from_bits(uint32_t{h} << 16); }
inline bool bf16_exact(float f) { return (f32_bits(f) & 0xFFFFu) == 0; }
// Round to nearest even (NaN stays NaN).
uint16_t f32_to_bf16_rne(float f);
inline float round_to_bf16(float f) { return bf16_to_f32(f32_to_bf16_rne(f)); }

}  // namespace lowbit
