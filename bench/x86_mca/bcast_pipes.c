/* Does a broadcast from memory (vpbroadcastd ymm, m32) use an FP shuffle pipe? LLVM's Zen
 * models say yes (FP1/FP2 on Zen 3, FP1 on Zen 4); if so, 12 broadcasts next to 12 vpshufb
 * (FP1/FP2) take as long as both apart, added up. They take as long as the slower alone on a
 * Zen 3 (docs/x86-kernels.md): the broadcast is a load. vpermq (FP1/FP2 too) is the control.
 *
 *   gcc -O2 -mavx2 bench/x86_mca/bcast_pipes.c -o /tmp/bcast_pipes && /tmp/bcast_pipes
 */
#include <stdint.h>
#include <stdio.h>
#include <x86intrin.h>

static int32_t buf[16] __attribute__((aligned(64)));
#define R12(x) x x x x x x x x x x x x
#define TIME(label, ...)                                                   \
  do {                                                                     \
    const uint64_t t0 = __rdtsc();                                          \
    for (long i = 0; i < 10000000; ++i) __asm__ volatile(__VA_ARGS__);            \
    printf("  %-20s %6.2f\n", label, (double)(__rdtsc() - t0) / 1e7); \
  } while (0)

int main(void) {
  printf("TSC ticks per loop iteration (best of 5 rounds is the figure to read):\n");
  for (int round = 0; round < 5; ++round) {
    printf("round %d\n", round);
    TIME("12 vpshufb", R12("vpshufb %%ymm0, %%ymm1, %%ymm2\n\t") ::: "xmm2");
    TIME("12 vpbroadcastd m32", R12("vpbroadcastd (%0), %%ymm3\n\t") :: "r"(buf) : "xmm3");
    TIME("both, interleaved",
         R12("vpshufb %%ymm0, %%ymm1, %%ymm2\n\tvpbroadcastd (%0), %%ymm3\n\t") :: "r"(buf) : "xmm2", "xmm3");
    TIME("vpshufb + vpermq", R12("vpshufb %%ymm0, %%ymm1, %%ymm2\n\tvpermq $0x1b, %%ymm1, %%ymm3\n\t") ::: "xmm2", "xmm3");
  }
  return 0;
}
