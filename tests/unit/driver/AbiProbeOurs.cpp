// cuda.h ABI facts of ptxforge's own header (driver/include/cuda.h).
#include PTXFORGE_OUR_CUDA_H
#include "AbiProbe.h"
#include "AbiProbe.inc"

AbiFacts ourCudaHeaderFacts() { return collectFacts(); }
