// llvm-mca harness for the neon kernels (body: mca_harness.h).
#include "kernels/arm/neon/neon_impl.h"

#define MCA_ISA neon
#define MCA_KERN NeonKern
#include "mca_harness.h"
