// The dot-kernel table: the one place that decides which implementation runs for a weight type.
// Only scalar kernels exist yet; SIMD tables (avx2/, avx512/, neon/) will be selected here from the
// CPU features detected at run time, falling back to the scalar entry for types they lack.
#include <array>

#include "formats/block_types.h"
#include "kernels/dot.h"
#include "kernels/dot_wq.h"

namespace wisp::kernels {

namespace {

constexpr auto id(GgmlType t) { return static_cast<std::uint32_t>(t); }

// Batches of 2+ tokens (tinyBLAS) use the same order as one token for the 32-value types, so
// they need no batched entry; the K-quants switch to the tiled GEMM at 8 tokens.
constexpr std::array kScalarKernels = {
    DotKernel{id(GgmlType::kF32), ActFormat::kF32, scalar::dot_f32},
    DotKernel{id(GgmlType::kF16), ActFormat::kF16, scalar::dot_f16},
    DotKernel{id(GgmlType::kBF16), ActFormat::kBF16, scalar::dot_bf16},
    DotKernel{id(GgmlType::kQ4_0), ActFormat::kQ8_0, scalar::dot_q4_0, nullptr, 2, scalar::dot_q4_0_repacked},
    DotKernel{id(GgmlType::kQ4_1), ActFormat::kQ8_1, scalar::dot_q4_1},
    DotKernel{id(GgmlType::kQ5_0), ActFormat::kQ8_0, scalar::dot_q5_0},
    DotKernel{id(GgmlType::kQ5_1), ActFormat::kQ8_1, scalar::dot_q5_1},
    DotKernel{id(GgmlType::kQ8_0), ActFormat::kQ8_0, scalar::dot_q8_0},
    DotKernel{id(GgmlType::kQ2_K), ActFormat::kQ8_K, scalar::dot_q2_k, scalar::dot_q2_k_tiled, 8},
    DotKernel{id(GgmlType::kQ3_K), ActFormat::kQ8_K, scalar::dot_q3_k, scalar::dot_q3_k_tiled, 8},
    DotKernel{id(GgmlType::kQ4_K), ActFormat::kQ8_K, scalar::dot_q4_k, scalar::dot_q4_k_tiled, 8,
              scalar::dot_q4_k_repacked, scalar::dot_q4_k_repacked_x4},
    DotKernel{id(GgmlType::kQ5_K), ActFormat::kQ8_K, scalar::dot_q5_k, scalar::dot_q5_k_tiled, 8},
    DotKernel{id(GgmlType::kQ6_K), ActFormat::kQ8_K, scalar::dot_q6_k, scalar::dot_q6_k_tiled, 8},
};

}  // namespace

const DotKernel* find_scalar_dot_kernel(std::uint32_t type_id) {
  for (const DotKernel& k : kScalarKernels) {
    if (k.weight_type == type_id) return &k;
  }
  return find_wq_dot_kernel(type_id);  // wisp's own group-wise types
}

const DotKernel* find_dot_kernel(std::uint32_t type_id) {
  // Runtime ISA dispatch goes here (issue: fast SIMD kernels).
  return find_scalar_dot_kernel(type_id);
}

}  // namespace wisp::kernels
