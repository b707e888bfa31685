// The dot-kernel table: the one place that decides which implementation runs for a weight type.
// Each ISA's table starts from the scalar kernels and replaces the functions that ISA implements
// (isa_dots.h); the ISA is chosen at run time from the CPU's features (core/cpu_features.h), or
// forced with WISP_ISA=scalar|avx2|avx512|neon|neon-dotprod.
#include <array>
#include <cstddef>

#include "formats/block_types.h"
#include "kernels/dot.h"
#include "kernels/dot_wq.h"
#include "kernels/isa_dots.h"

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
    DotKernel{id(GgmlType::kIQ2_XXS), ActFormat::kQ8_K, scalar::dot_iq2_xxs, scalar::dot_iq2_xxs_tiled, 8},
    DotKernel{id(GgmlType::kIQ3_XXS), ActFormat::kQ8_K, scalar::dot_iq3_xxs, scalar::dot_iq3_xxs_tiled, 8},
    DotKernel{id(GgmlType::kIQ2_XS), ActFormat::kQ8_K, scalar::dot_iq2_xs, scalar::dot_iq2_xs_tiled, 8},
    DotKernel{id(GgmlType::kIQ2_S), ActFormat::kQ8_K, scalar::dot_iq2_s, scalar::dot_iq2_s_tiled, 8},
    DotKernel{id(GgmlType::kIQ3_S), ActFormat::kQ8_K, scalar::dot_iq3_s, scalar::dot_iq3_s_tiled, 8},
    DotKernel{id(GgmlType::kIQ1_S), ActFormat::kQ8_K, scalar::dot_iq1_s, scalar::dot_iq1_s_tiled, 8},
    DotKernel{id(GgmlType::kIQ1_M), ActFormat::kQ8_K, scalar::dot_iq1_m, scalar::dot_iq1_m_tiled, 8},
};

using Table = std::array<DotKernel, kScalarKernels.size()>;

Table build_table(Isa isa) {
  Table t;
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = kScalarKernels[i];
  const IsaDots* dots = nullptr;
  std::size_t n = 0;
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) dots = avx512_dots(&n);
  if (isa == Isa::kAvx2) dots = avx2_dots(&n);
#endif
#if defined(__aarch64__)
  if (isa == Isa::kNeon) dots = neon_dots(&n);
  if (isa == Isa::kNeonDotprod) dots = neon_dotprod_dots(&n);
#endif
  for (std::size_t j = 0; j < n; ++j) {
    for (DotKernel& k : t) {
      if (k.weight_type != dots[j].weight_type) continue;
      k.isa = isa_name(isa);
      k.dot = dots[j].dot;
      if (dots[j].dot_batched != nullptr) k.dot_batched = dots[j].dot_batched;
      if (dots[j].dot_repacked != nullptr) k.dot_repacked = dots[j].dot_repacked;
      if (dots[j].dot_repacked_x4 != nullptr) k.dot_repacked_x4 = dots[j].dot_repacked_x4;
      if (dots[j].dot_invariant != nullptr) {
        k.dot_invariant = dots[j].dot_invariant;
        k.act_invariant = dots[j].act_invariant;
      }
    }
  }
  return t;
}

// One table per ISA, built on first use (function-local statics: initialised once, thread-safe,
// never written afterwards).
const Table& table_for(Isa isa) {
  static const Table avx512 = build_table(Isa::kAvx512);
  static const Table avx2 = build_table(Isa::kAvx2);
  static const Table scalar = build_table(Isa::kScalar);
  static const Table neon = build_table(Isa::kNeon);
  static const Table neon_dotprod = build_table(Isa::kNeonDotprod);
  if (isa == Isa::kNeon) return neon;
  if (isa == Isa::kNeonDotprod) return neon_dotprod;
  return isa == Isa::kAvx512 ? avx512 : isa == Isa::kAvx2 ? avx2 : scalar;
}

}  // namespace

const DotKernel* find_dot_kernel_for(std::uint32_t type_id, Isa isa) {
  if (!isa_supported(isa, detect_cpu_features())) return nullptr;
  for (const DotKernel& k : table_for(isa)) {
    if (k.weight_type == type_id) return &k;
  }
  return find_wq_dot_kernel_for(type_id, isa);
}

Isa dot_kernel_isa() {
  static const Isa isa = selected_isa();  // WISP_ISA is read once per process
  return isa;
}

const DotKernel* find_scalar_dot_kernel(std::uint32_t type_id) {
  for (const DotKernel& k : kScalarKernels) {
    if (k.weight_type == type_id) return &k;
  }
  return find_wq_dot_kernel(type_id);  // wisp's own group-wise types
}

const DotKernel* find_dot_kernel(std::uint32_t type_id) { return find_dot_kernel_for(type_id, dot_kernel_isa()); }

}  // namespace wisp::kernels
