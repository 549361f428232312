// llvm-mca harness for the dotprod kernels (body: mca_harness.h).
#include "kernels/arm/dotprod/dotprod_impl.h"

#define MCA_ISA dotprod
#define MCA_KERN DotKern
#include "mca_harness.h"
