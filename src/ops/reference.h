// Oracles on unpacked weights, for tests and tools.
#pragma once

#include <cstdint>

#include "format/problem.h"

namespace lowbit {

struct ClampRange {
  bool on = false;
  float lo = 0.0f, hi = 0.0f;
};

// The bit-exact definition (DESIGN §1), written for clarity: every kernel must match it
// with memcmp. qvals [n,k], scales/zeros [n,G] (zeros may be null), bias [n] or null.
void reference_linear(const WeightProblem& p, const int8_t* qvals, const float* scales,
                      const int8_t* zeros, const float* bias, int m, const float* x, float* y,
                      ClampRange clamp = {});

// y = x @ dequant(W)^T + bias in double precision on unquantized activations: what the
// quantized operation approximates.
void float_reference_linear(const WeightProblem& p, const int8_t* qvals, const float* scales,
                            const int8_t* zeros, const float* bias, int m, const float* x,
                            float* y, ClampRange clamp = {});

}  // namespace lowbit
