#include "kernels/float_gemm.h"

#include <string_view>

#include "core/cpu_features.h"

namespace wisp::kernels {

FloatGemmFn find_float_gemm(const DotKernel& k) {
  if (k.dot_invariant == nullptr || k.act_invariant != ActFormat::kF32) return nullptr;
  const FloatGemm* table = nullptr;
  std::size_t n = 0;
#if defined(__x86_64__)
  // k comes from that ISA's dot table (its isa names it), so the CPU has the ISA.
  const std::string_view isa = k.isa;
  if (isa == isa_name(Isa::kAvx2)) table = avx2_float_gemms(&n);
  if (isa == isa_name(Isa::kAvx512)) table = avx512_float_gemms(&n);
#endif
  for (std::size_t i = 0; i < n; ++i) {
    if (table[i].weight_type == k.weight_type) return table[i].gemm;
  }
  return nullptr;
}

}  // namespace wisp::kernels
