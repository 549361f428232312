// llvm-mca harness body (scripts/arm_mca.sh): a kernel family's panel loop with the group size
// fixed at 32, so one iteration of the group loop is one straight-line 8-column x 32-k block,
// per-group scaling included. Each mca_<isa>.cpp includes its ISA's impl header, defines
// MCA_ISA / MCA_KERN and includes this. Built only by that script, never into the library.
#define MCA_CAT(isa, MR, BITS) mca_##isa##_mr##MR##_b##BITS
#define MCA_NAME(isa, MR, BITS) MCA_CAT(isa, MR, BITS)  // expands MCA_ISA first

namespace lowbit {
namespace arm {

#define MCA(MR, BITS)                                                                         \
  extern "C" __attribute__((flatten)) void MCA_NAME(MCA_ISA, MR, BITS)(const GemmShape& s,   \
                                                                      const UKernelArgs& a) { \
    run_bits<MCA_KERN<MR>, BITS, 32>(s, a, lhs_parts(a.lhs, MCA_KERN<MR>::kLhs, s));         \
  }
MCA(1, 4)
MCA(1, 8)
MCA(1, 3)
MCA(4, 4)
MCA(4, 8)
MCA(4, 3)

}  // namespace arm
}  // namespace lowbit
