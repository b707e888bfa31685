// The per-ISA WQ dot kernels (src/kernels/x86/wq_dots.h), exported as plain function pointers
// (see isa_dots.h for why) for dot_wq.cpp's tables.
#pragma once

#include <cstddef>

#include "kernels/isa_dots.h"

namespace wisp::kernels {

// Only `weight_type` and `dot` are set. Call only when the CPU supports the ISA.
const IsaDots* avx2_wq_dots(std::size_t* n);
const IsaDots* avx512_wq_dots(std::size_t* n);

}  // namespace wisp::kernels
