// One probe of cuda.h's ABI: an entry's name and what one header says about it (a value, a size, an offset,
// or a function's type). Each probe translation unit includes one header and evaluates the generated list.
#pragma once

#include <string>
#include <utility>
#include <vector>

using AbiFacts = std::vector<std::pair<std::string, std::string>>;

/// The facts of driver/include/cuda.h (AbiProbeOurs.cpp).
AbiFacts ourCudaHeaderFacts();
/// The facts of NVIDIA's cuda.h (AbiProbeNvidia.cpp), when one is installed.
AbiFacts nvidiaCudaHeaderFacts();
