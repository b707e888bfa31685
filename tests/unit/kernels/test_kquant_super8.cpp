// wisp's own dot order for the K-quants (DotKernel::dot_invariant, kernels/dot_kquant_super8.cpp):
//  - every SIMD one-token kernel equals its scalar form bit for bit (random and adversarial
//    weights, quantized and raw activations over the whole int8 range, rows of 1 .. 33
//    super-blocks: every tail of the 8-super-block groups), on each x86 ISA this CPU runs;
//  - each ISA's table has the 8-row GEMM for the types (its bits against the one-token kernel:
//    MultiDots.Gemm8EqualsTheOneTokenKernelBitForBit, test_multi_dots.cpp);
//  - the order's accuracy against the exact value (double precision over the same quantized
//    weights and activations), as a normalized error |y - exact| / sum |w_i a_i| per output, next
//    to the llama.cpp order's on the same data: the numerics contract of src/kernels/README.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/kquant_unpack.h"
#include "kernels/multi_dots.h"
#include "invariant_order_checks.h"
#include "random_blocks.h"

namespace wisp {
namespace {

using kernels::ActFormat;
using kernels::DotFn;

constexpr GgmlType kTypes[] = {GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ4_K, GgmlType::kQ5_K, GgmlType::kQ6_K};

DotFn scalar_form(GgmlType t) {
  switch (t) {
    case GgmlType::kQ2_K: return kernels::scalar::dot_q2_k_super8;
    case GgmlType::kQ3_K: return kernels::scalar::dot_q3_k_super8;
    case GgmlType::kQ4_K: return kernels::scalar::dot_q4_k_super8;
    case GgmlType::kQ5_K: return kernels::scalar::dot_q5_k_super8;
    case GgmlType::kQ6_K: return kernels::scalar::dot_q6_k_super8;
    default: return nullptr;
  }
}

class KQuantSuper8Isa : public ::testing::TestWithParam<Isa> {};

TEST_P(KQuantSuper8Isa, EqualsItsScalarFormBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(31);
  for (GgmlType type : kTypes) {
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    ASSERT_NE(k, nullptr);
    ASSERT_NE(k->dot_invariant, nullptr) << block_type(type).name << ": no " << isa_name(isa) << " kernel";
    ASSERT_EQ(k->act_invariant, ActFormat::kQ8_K);
    test::expect_same_bits_as_scalar_form(
        type, isa_name(isa), k->dot_invariant, scalar_form(type),
        {1 * kQK_K, 2 * kQK_K, 7 * kQK_K, 8 * kQK_K, 9 * kQK_K, 16 * kQK_K, 17 * kQK_K, 33 * kQK_K},
        [&](std::int64_t n) { return test::activation_rows(ActFormat::kQ8_K, n, rng); }, rng);
  }
}

TEST_P(KQuantSuper8Isa, EachIsaHasTheGemm) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::size_t n = 0;
  const kernels::MultiDot* m = kernels::multi_dots_for(isa, &n);
  for (GgmlType type : kTypes) {
    const auto id = static_cast<std::uint32_t>(type);
    const bool found = std::any_of(m, m + n, [&](const kernels::MultiDot& e) {
      return e.weight_type == id && e.slot == kernels::DotSlot::kInvariant && e.gemm8 != nullptr;
    });
    EXPECT_TRUE(found) << block_type(type).name << " " << isa_name(isa);
  }
}

INSTANTIATE_TEST_SUITE_P(X86, KQuantSuper8Isa, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

// The numerics contract per matmul: over random matrices at the real models' row lengths, the
// largest normalized error of wisp's order stays within 2e-6 (llama.cpp's one-token order, measured
// on the same data, is printed beside it; both are float rounding of the same exact integer sums).
TEST(KQuantSuper8, NormalizedErrorAgainstTheExactValueIsBounded) {
  std::mt19937 rng(2025);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (GgmlType type : kTypes) {
    const BlockTypeInfo& info = block_type(type);
    const kernels::DotKernel* ref = kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(type));
    ASSERT_NE(ref, nullptr);
    ASSERT_EQ(ref->act, ActFormat::kQ8_K);
    for (std::int64_t n : {1536, 2048, 8192}) {
      const std::int64_t rows = 64;
      const auto w = test::random_matrix(type, rows, n, rng);
      std::vector<float> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = normal(rng);
      x[7] = 30.0f;  // an outlier channel, as real activations have
      std::vector<std::uint8_t> q8(kernels::act_row_bytes(ActFormat::kQ8_K, n));
      kernels::convert_act_row(ActFormat::kQ8_K, x.data(), q8.data(), n);
      const auto* y = reinterpret_cast<const kernels::BlockQ8_K*>(q8.data());
      test::NormalizedErrors errors;
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint8_t* wr = w.data() + static_cast<std::size_t>(r) * info.row_bytes(n);
        double exact = 0.0, magnitude = 0.0;
        kernels::KBlock kb;
        for (std::int64_t b = 0; b < n / kQK_K; ++b) {
          switch (type) {
            case GgmlType::kQ2_K: kernels::unpack_kblock(reinterpret_cast<const BlockQ2_K*>(wr)[b], kb); break;
            case GgmlType::kQ3_K: kernels::unpack_kblock(reinterpret_cast<const BlockQ3_K*>(wr)[b], kb); break;
            case GgmlType::kQ4_K: kernels::unpack_kblock(reinterpret_cast<const BlockQ4_K*>(wr)[b], kb); break;
            case GgmlType::kQ5_K: kernels::unpack_kblock(reinterpret_cast<const BlockQ5_K*>(wr)[b], kb); break;
            default: kernels::unpack_kblock(reinterpret_cast<const BlockQ6_K*>(wr)[b], kb); break;
          }
          for (int e = 0; e < kQK_K; ++e) {
            const int sub = e / kb.sub_len;
            const double wv =
                static_cast<double>(kb.d) * kb.scale[sub] * kb.q[e] - static_cast<double>(kb.dmin) * kb.min[sub];
            const double av = static_cast<double>(y[b].d) * y[b].qs[e];
            exact += wv * av;
            magnitude += std::abs(wv * av);
          }
        }
        const double fast = scalar_form(type)(wr, q8.data(), n);
        const double llama = ref->dot(wr, q8.data(), n);
        errors.add(fast, llama, exact, magnitude);
      }
      errors.expect_within(info.name, n, 2e-6);
    }
  }
}

}  // namespace
}  // namespace wisp
