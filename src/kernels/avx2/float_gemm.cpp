// The avx2 float GEMMs: x86/float_tiles-inl.h compiled with this ISA's flags (CMakeLists.txt),
// exported as a table for this ISA's kernel_set.cpp.
#include "formats/block_types.h"
#include "kernels/kernel_set.h"
#include "kernels/x86/float_tiles-inl.h"

namespace wisp::kernels {

const FloatGemm* avx2_float_gemms(std::size_t* n) {
  using namespace x86;
  static constexpr FloatGemm kGemms[] = {
      {static_cast<std::uint32_t>(GgmlType::kF32), float_gemm<F32Row>},
      {static_cast<std::uint32_t>(GgmlType::kF16), float_gemm<F16Row>},
      {static_cast<std::uint32_t>(GgmlType::kBF16), float_gemm<BF16Row>},
  };
  *n = sizeof kGemms / sizeof kGemms[0];
  return kGemms;
}

}  // namespace wisp::kernels
