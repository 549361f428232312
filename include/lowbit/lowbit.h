/* lowbit C API: the stable surface for embedding.
 *
 * y[m,n] = clamp(quant_int8(x)[m,k] · dequant(W)[n,k]^T + bias[n]) with the exact, bit-reproducible
 * f32 operation sequence documented in docs/semantics.md. Every function returns LOWBIT_OK or a
 * status; on failure lowbit_last_error() returns a thread-local message naming the bad value.
 */
#ifndef LOWBIT_LOWBIT_H_
#define LOWBIT_LOWBIT_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct lowbit_packed_weights lowbit_packed_weights; /* opaque */

typedef enum {
  LOWBIT_OK = 0,
  LOWBIT_INVALID_ARGUMENT,
  LOWBIT_UNSUPPORTED,
  LOWBIT_CORRUPT_DATA,
  LOWBIT_IO_ERROR,
  LOWBIT_OUT_OF_MEMORY,
  LOWBIT_INTERNAL
} lowbit_status;

typedef struct {
  int has_clamp;
  float clamp_min, clamp_max;
  int num_threads; /* <= 0: all cores */
} lowbit_linear_options;

/* Thread-local message for the last failure on this thread ("" if none). */
const char* lowbit_last_error(void);

/* qvals: [n,k] int8, each in [-2^(bits-1), 2^(bits-1)-1]; scales: [n, k/group_size] f32;
 * zeros: [n, k/group_size] int8 or NULL; bias: [n] f32 or NULL.
 * target: NULL or "" = this CPU; or "portable", "x86-avx2", "x86-avxvnni", "x86-avx512vnni",
 * "aarch64-neon", "aarch64-dotprod", "aarch64-i8mm". */
lowbit_status lowbit_pack_weights(int n, int k, int bits, int group_size,
                                  const int8_t* qvals, const float* scales,
                                  const int8_t* zeros /* may be NULL */,
                                  const float* bias /* may be NULL */,
                                  const char* target /* NULL = this CPU */,
                                  lowbit_packed_weights** out);

/* x: [m,k] f32 row-major, y: [m,n] f32 row-major. */
lowbit_status lowbit_linear(const lowbit_packed_weights* w, int m, const float* x,
                            float* y, const lowbit_linear_options* opts /* may be NULL */);

lowbit_status lowbit_save(const lowbit_packed_weights* w, const char* path);
lowbit_status lowbit_load(const char* path, lowbit_packed_weights** out);
lowbit_status lowbit_from_buffer(const void* data, size_t size, lowbit_packed_weights** out);

/* Converts packed weights into the layout `target` (NULL = this CPU) uses; results are
 * bit-identical. Use it for weights packed for another CPU (lowbit_linear returns
 * LOWBIT_UNSUPPORTED for those). */
lowbit_status lowbit_repack(const lowbit_packed_weights* w, const char* target,
                            lowbit_packed_weights** out);

void lowbit_free(lowbit_packed_weights* w);

/* Makes the tuning record at `path` (written by `lowbit tune`, docs/tuning.md) the one the
 * planner uses from now on. LOWBIT_IO_ERROR: unreadable; LOWBIT_CORRUPT_DATA: not a valid
 * record (truncated, corrupt, absurd values); LOWBIT_UNSUPPORTED: for another CPU or lowbit
 * version. On failure the tuning in use stays. NULL or "": back to the automatic lookup
 * (LOWBIT_TUNING, the user's cache directory, the built-in records, generic numbers).
 * Results are bit-identical whatever the tuning; only speed changes. */
lowbit_status lowbit_load_tuning(const char* path);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LOWBIT_LOWBIT_H_ */
