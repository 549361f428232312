/* A small program against the installed lowbit C API (docs/cross-aarch64.md): packs 4-bit
 * weights for this CPU and for the portable layout, runs both, and checks that the results
 * are bit-identical (DESIGN §1) -- on aarch64 the first runs the NEON / dot-product / i8mm
 * kernels, the second the scalar reference kernel. */
#include <stdio.h>
#include <string.h>

#include <lowbit/lowbit.h>

enum { N = 40, K = 256, G = 32, M = 5 };

int main(void) {
  static int8_t q[N * K], zeros[N * (K / G)];
  static float scales[N * (K / G)], bias[N], x[M * K], y_here[M * N], y_portable[M * N];
  unsigned s = 12345u;
  for (int i = 0; i < N * K; ++i) q[i] = (int8_t)((s = s * 1103515245u + 12345u) >> 16) % 8;
  for (int i = 0; i < N * (K / G); ++i) {
    scales[i] = 0.01f + (float)(i % 7) * 0.003f;
    zeros[i] = (int8_t)(i % 5 - 2);
  }
  for (int i = 0; i < N; ++i) bias[i] = 0.1f * (float)(i % 3);
  for (int i = 0; i < M * K; ++i) x[i] = (float)((int)((s = s * 1103515245u + 12345u) >> 16) % 201 - 100) / 50.0f;

  lowbit_linear_options opt = {1, -2.0f, 2.0f, 1};
  const char* targets[2] = {NULL, "portable"};
  float* outs[2] = {y_here, y_portable};
  for (int t = 0; t < 2; ++t) {
    lowbit_packed_weights* w = NULL;
    if (lowbit_pack_weights(N, K, 4, G, q, scales, zeros, bias, targets[t], &w) != LOWBIT_OK ||
        lowbit_linear(w, M, x, outs[t], &opt) != LOWBIT_OK) {
      fprintf(stderr, "lowbit: %s\n", lowbit_last_error());
      return 1;
    }
    lowbit_free(w);
  }
  if (memcmp(y_here, y_portable, sizeof y_here) != 0) {
    fprintf(stderr, "results differ from the portable kernel\n");
    return 1;
  }
  printf("lowbit cross check ok: y[0] = %.6f, y[%d] = %.6f, bit-identical to the portable kernel\n",
         y_here[0], M * N - 1, y_here[M * N - 1]);
  return 0;
}
