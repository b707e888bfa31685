// The scalar dot kernels of the GGML types, from which every ISA's bundle starts (kernel_set.h:
// each ISA replaces the functions it implements), and the lookups of dot.h over the bundles.
#include <array>
#include <cstddef>

#include "formats/block_types.h"
#include "kernels/dot.h"
#include "kernels/kernel_set.h"

namespace wisp::kernels {

namespace {

constexpr auto id(GgmlType t) { return static_cast<std::uint32_t>(t); }

// Batches of 2+ tokens (tinyBLAS) use the same order as one token for the 32-value types, so
// they need no batched entry; the K-quants switch to the tiled GEMM at 8 tokens. The float types
// take tinyBLAS's own float order from 2 tokens, on matrices of 4k rows (tinyBLAS's condition).
constexpr std::array kScalarKernels = {
    DotKernel{id(GgmlType::kF32), ActFormat::kF32, scalar::dot_f32, scalar::dot_f32_batched, 2, nullptr, nullptr, 4},
    DotKernel{id(GgmlType::kF16), ActFormat::kF16, scalar::dot_f16, scalar::dot_f16_batched, 2, nullptr, nullptr, 4},
    DotKernel{id(GgmlType::kBF16), ActFormat::kBF16, scalar::dot_bf16, scalar::dot_bf16_batched, 2, nullptr, nullptr,
              4},
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
    DotKernel{id(GgmlType::kIQ4_NL), ActFormat::kQ8_0, scalar::dot_iq4_nl, scalar::dot_iq4_nl_batched, 2,
              scalar::dot_iq4_nl_repacked},
    DotKernel{id(GgmlType::kIQ4_XS), ActFormat::kQ8_K, scalar::dot_iq4_xs, scalar::dot_iq4_xs_tiled, 8},
    DotKernel{id(GgmlType::kTQ1_0), ActFormat::kQ8_K, scalar::dot_tq1_0},
    DotKernel{id(GgmlType::kTQ2_0), ActFormat::kQ8_K, scalar::dot_tq2_0},
    DotKernel{id(GgmlType::kMXFP4), ActFormat::kQ8_0, scalar::dot_mxfp4, nullptr, 2, scalar::dot_mxfp4_repacked},
    DotKernel{id(GgmlType::kNVFP4), ActFormat::kQ8_0, scalar::dot_nvfp4},
    DotKernel{id(GgmlType::kIQ2_XXS), ActFormat::kQ8_K, scalar::dot_iq2_xxs, scalar::dot_iq2_xxs_tiled, 8},
    DotKernel{id(GgmlType::kIQ3_XXS), ActFormat::kQ8_K, scalar::dot_iq3_xxs, scalar::dot_iq3_xxs_tiled, 8},
    DotKernel{id(GgmlType::kIQ2_XS), ActFormat::kQ8_K, scalar::dot_iq2_xs, scalar::dot_iq2_xs_tiled, 8},
    DotKernel{id(GgmlType::kIQ2_S), ActFormat::kQ8_K, scalar::dot_iq2_s, scalar::dot_iq2_s_tiled, 8},
    DotKernel{id(GgmlType::kIQ3_S), ActFormat::kQ8_K, scalar::dot_iq3_s, scalar::dot_iq3_s_tiled, 8},
    DotKernel{id(GgmlType::kIQ1_S), ActFormat::kQ8_K, scalar::dot_iq1_s, scalar::dot_iq1_s_tiled, 8},
    DotKernel{id(GgmlType::kIQ1_M), ActFormat::kQ8_K, scalar::dot_iq1_m, scalar::dot_iq1_m_tiled, 8},
};

}  // namespace

std::span<const DotKernel> scalar_ggml_dots() { return kScalarKernels; }

const DotKernel* find_dot_kernel_for(std::uint32_t type_id, Isa isa) {
  const KernelSet* k = kernel_set_for(isa);
  return k != nullptr ? k->find_dot(type_id) : nullptr;
}

Isa dot_kernel_isa() { return kernel_set().isa; }

const DotKernel* find_scalar_dot_kernel(std::uint32_t type_id) {
  return kernel_set_for(Isa::kScalar)->find_dot(type_id);
}

const DotKernel* find_dot_kernel(std::uint32_t type_id) { return kernel_set().find_dot(type_id); }

}  // namespace wisp::kernels
