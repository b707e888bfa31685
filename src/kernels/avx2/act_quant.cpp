// The avx2 activation quantizers: the x86 bodies (src/kernels/x86/act_quant-inl.h) compiled with this
// ISA's flags (set per file in CMakeLists.txt), exported for this ISA's kernel_set.cpp.
#include "kernels/kernel_set.h"
#include "kernels/x86/act_quant-inl.h"

namespace wisp::kernels {

const IsaActQuant* avx2_act_quant() {
  static constexpr IsaActQuant kQuant = {x86::quantize_q8_0, x86::quantize_q8_1, x86::quantize_q8_k<false>,
                                         x86::quantize_q8_k<true>};
  return &kQuant;
}

}  // namespace wisp::kernels
