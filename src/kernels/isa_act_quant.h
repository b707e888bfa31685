// The interface between act_quant.cpp and the per-ISA activation quantizers (src/kernels/avx2/,
// src/kernels/avx512/), exported as plain function pointers for the reason isa_dots.h gives.
#pragma once

#include "kernels/act_quant.h"

namespace wisp::kernels {

struct IsaActQuant {
  ActQuantFn q8_0;
  ActQuantFn q8_1;
  ActQuantFn q8_K;
  ActQuantFn q8_Kx4;
};

// Call only when the CPU supports the ISA.
const IsaActQuant* avx2_act_quant();
const IsaActQuant* avx512_act_quant();

}  // namespace wisp::kernels
