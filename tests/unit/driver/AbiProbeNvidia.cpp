// cuda.h ABI facts of NVIDIA's header, compiled only where the CUDA toolkit is installed.
#include PTXFORGE_NVIDIA_CUDA_H
#include "AbiProbe.h"
#include "AbiProbe.inc"

AbiFacts nvidiaCudaHeaderFacts() { return collectFacts(); }
