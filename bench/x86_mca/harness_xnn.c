/* One call of an XNNPACK GEMM micro-kernel, for scripts/x86_mca.sh to trace under gdb
 * (trace_gdb.py). XNNPACK is not part of lowbit: the kernels are compiled from the peer
 * sources that ../shared/anchors builds, with XNNPACK's own flags. Weights and activations
 * are zero (the kernels' control flow does not depend on them); the parameter structs below
 * mirror XNNPACK's src/xnnpack/microparams.h at the pinned commit.
 *
 *   harness_xnn KERNEL MR NC KC BLOCKSIZE
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct qb4w_params { struct { float min, max; size_t blocksize; } scalar; };
struct qc4w_params { struct { float min, max; int32_t kernel_zero_point; } scalar; };
struct quant_params { int32_t zero_point; float inv_scale; };

typedef void (*gemm_fn)(size_t mr, size_t nc, size_t kc, const int8_t* a, size_t a_stride,
                        const void* w, float* c, size_t cm_stride, size_t cn_stride,
                        const void* params, const struct quant_params* qp);

#define KERNELS(X)                                               \
  X(xnn_qd8_f32_qb4w_gemm_minmax_ukernel_8x16c8__avx512vnni_prfm, 1) \
  X(xnn_qd8_f32_qb4w_gemm_minmax_ukernel_1x16c8__avx512vnni_prfm, 1) \
  X(xnn_qd8_f32_qb4w_gemm_minmax_ukernel_3x8c8__avx2, 1)         \
  X(xnn_qd8_f32_qb4w_gemm_minmax_ukernel_1x8c8__avx2, 1)         \
  X(xnn_qd8_f32_qc4w_gemm_minmax_ukernel_5x8c8__avxvnni_prfm, 0) \
  X(xnn_qd8_f32_qc4w_gemm_minmax_ukernel_1x8c8__avxvnni_prfm, 0)

#define DECLARE(name, qb4w) void name(void);
KERNELS(DECLARE)

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s KERNEL MR NC KC BLOCKSIZE\n", argv[0]);
    return 2;
  }
  gemm_fn fn = NULL;
  int qb4w = 0;
#define PICK(name, is_qb4w) \
  if (strcmp(argv[1], #name) == 0) { fn = (gemm_fn)(void (*)(void))name; qb4w = is_qb4w; }
  KERNELS(PICK)
  if (fn == NULL) {
    fprintf(stderr, "unknown kernel %s\n", argv[1]);
    return 2;
  }
  const size_t mr = (size_t)atoi(argv[2]), nc = (size_t)atoi(argv[3]), kc = (size_t)atoi(argv[4]);
  const size_t bl = (size_t)atoi(argv[5]);
  int8_t* a = aligned_alloc(64, mr * kc + 64);
  void* w = aligned_alloc(64, 1 << 22);
  float* c = aligned_alloc(64, mr * nc * sizeof(float) + 64);
  memset(a, 0, mr * kc + 64);
  memset(w, 0, 1 << 22);
  struct quant_params qp[16];
  for (int i = 0; i < 16; ++i) { qp[i].zero_point = 1; qp[i].inv_scale = 1.0f; }
  struct qb4w_params pb = {{-1e30f, 1e30f, bl}};
  struct qc4w_params pc = {{-1e30f, 1e30f, 8}};
  fn(mr, nc, kc, a, kc, w, c, nc * sizeof(float), 16 * sizeof(float), qb4w ? (void*)&pb : (void*)&pc, qp);
  printf("%s: c[0] = %g\n", argv[1], (double)c[0]);
  return 0;
}
