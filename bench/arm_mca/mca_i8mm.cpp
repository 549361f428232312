// llvm-mca harness (scripts/arm_mca.sh): the i8mm kernels' panel loop with the group size fixed
// at 32, so one iteration of the group loop is one straight-line 8-column x 32-k block,
// per-group scaling included. Built only by that script, never into the library.
#include "kernels/arm/i8mm/i8mm_impl.h"

namespace lowbit {
namespace arm {

#define MCA(MR, BITS)                                                                    \
  extern "C" __attribute__((flatten)) void mca_i8mm_mr##MR##_b##BITS(const GemmShape& s, const UKernelArgs& a) { \
    run_bits<MmlaKern<MR>, BITS, 32>(s, a, lhs_parts(a.lhs, MmlaKern<MR>::kLhs, s));                 \
  }
MCA(1, 4)
MCA(1, 8)
MCA(1, 3)
MCA(4, 4)
MCA(4, 8)
MCA(4, 3)

}  // namespace arm
}  // namespace lowbit
