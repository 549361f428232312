// llvm-mca harness for the i8mm kernels (body: mca_harness.h).
#include "kernels/arm/i8mm/i8mm_impl.h"

#define MCA_ISA i8mm
#define MCA_KERN MmlaKern
#include "mca_harness.h"
