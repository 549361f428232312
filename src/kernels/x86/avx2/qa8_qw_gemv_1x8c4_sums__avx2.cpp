// 1 row x 8 columns x 4 k per step, AVX2 (vpmaddubsw), reading the layout's column sums: decode
// with the weights in L2 or L3, where the vector pipes are the limit and not the bytes. It is
// the GEMM family (gemm.h) at one row: the zero-point correction is one pair product with the
// stored sums per group, where qa8_qw_gemv_1x8c4__avx2 (for DRAM) adds up the bytes it
// streams. Four panels share each activation broadcast; no software prefetch of the weights
// (the cache's own prefetchers keep up, and measured here it only costs issue slots), one per
// group for the column sums, as in every GEMM.
#include "kernels/x86/kernels.h"
#include "kernels/x86/avx2/traits.h"
#include "kernels/x86/gemm.h"

namespace lowbit {

void qa8_qw_gemv_1x8c4_sums__avx2(const GemmShape& shape, const UKernelArgs& args) {
  x86::gemm<x86::Avx2, 1, 4, 0>(shape, args);
}

}  // namespace lowbit
