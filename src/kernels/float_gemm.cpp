#include "kernels/float_gemm.h"

#include <optional>

#include "core/cpu_features.h"
#include "kernels/kernel_set.h"

namespace wisp::kernels {

FloatGemmFn find_float_gemm(const DotKernel& k) {
  if (k.dot_invariant == nullptr || k.act_invariant != ActFormat::kF32) return nullptr;
  // k comes from that ISA's bundle (its isa names it), so the CPU has the ISA.
  const std::optional<Isa> isa = parse_isa(k.isa);
  const KernelSet* set = isa ? kernel_set_for(*isa) : nullptr;
  if (set == nullptr) return nullptr;
  for (const FloatGemm& g : set->float_gemms) {
    if (g.weight_type == k.weight_type) return g.gemm;
  }
  return nullptr;
}

}  // namespace wisp::kernels
