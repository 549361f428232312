/* The C API compiled as C: pack, run, check against a hand-computed value. */
#include <math.h>
#include <stdio.h>

#include "lowbit/lowbit.h"

int main(void) {
  enum { N = 2, K = 16 };
  int8_t q[N * K];
  float scales[N] = {0.5f, 0.25f};
  float x[K];
  for (int i = 0; i < N * K; ++i) q[i] = (int8_t)(i % 2 ? 1 : -1);
  for (int i = 0; i < K; ++i) x[i] = (i % 2) ? 1.0f : -1.0f;
  lowbit_packed_weights* w = NULL;
  if (lowbit_pack_weights(N, K, 2, 16, q, scales, NULL, NULL, NULL, &w) != LOWBIT_OK) {
    fprintf(stderr, "pack: %s\n", lowbit_last_error());
    return 1;
  }
  float y[N];
  lowbit_status s = lowbit_linear(w, 1, x, y, NULL);
  lowbit_free(w);
  if (s != LOWBIT_OK) {
    fprintf(stderr, "linear: %s\n", lowbit_last_error());
    return 1;
  }
  /* x·w = 16 * scale, exactly representable through int8 quantization of ±1. */
  if (fabsf(y[0] - 8.0f) > 0.1f || fabsf(y[1] - 4.0f) > 0.1f) {
    fprintf(stderr, "wrong result %f %f\n", y[0], y[1]);
    return 1;
  }
  printf("c smoke ok: %f %f\n", y[0], y[1]);
  return 0;
}
