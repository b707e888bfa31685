// wisp's own dot order for the K-quants (DotKernel::dot_invariant, kernels/dot_kquant_super8.cpp):
//  - every SIMD one-token kernel equals its scalar form bit for bit (random and adversarial
//    weights, quantized and raw activations over the whole int8 range, rows of 1 .. 33
//    super-blocks: every tail of the 8-super-block groups), on each x86 ISA this CPU runs;
//  - each ISA's table has the GEMM for the types (8 rows on AVX2, 16 on AVX-512), bit for bit
//    that ISA's one-token kernel on 33 distinct rows (also against the scalar form:
//    MultiDots.Gemm8EqualsTheOneTokenKernelBitForBit, test_multi_dots.cpp);
//  - the order's accuracy against the exact value (double precision over the same quantized
//    weights and activations), as a normalized error |y - exact| / sum |w_i a_i| per output, next
//    to the llama.cpp order's on the same data: the numerics contract of src/kernels/README.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/kquant_unpack.h"
#include "kernels/multi_dots.h"
#include "gemm_bit_checks.h"
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

// NEON has the GEMMs of the types with 32-value sub-blocks only (neon/kquant_super8_gemm-inl.h);
// x86 has all five.
bool has_gemm(Isa isa, GgmlType type) {
  const bool neon = isa == Isa::kNeon || isa == Isa::kNeonDotprod;
  return !neon || type == GgmlType::kQ4_K || type == GgmlType::kQ5_K;
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
    EXPECT_EQ(found, has_gemm(isa, type)) << block_type(type).name << " " << isa_name(isa);
  }
}

// Q8_K rows of n values with every code `code` (-128 or 127) and consistent block sums: against
// all-0xff weight codes they give each type's largest partial sums, so a GEMM grouping that leaves
// int16 wraps and fails.
std::vector<std::uint8_t> constant_q8_k(std::int64_t n, std::int8_t code) {
  std::vector<std::uint8_t> row(kernels::act_row_bytes(ActFormat::kQ8_K, n));
  auto* y = reinterpret_cast<kernels::BlockQ8_K*>(row.data());
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    y[b].d = 0.03f;
    std::fill(std::begin(y[b].qs), std::end(y[b].qs), code);
    std::fill(std::begin(y[b].bsums), std::end(y[b].bsums), static_cast<std::int16_t>(16 * code));
  }
  return row;
}

// The GEMM of this ISA's table (MultiDot::gemm8: 8 rows on AVX2, 16 in zmm lanes on AVX-512)
// against this ISA's own one-token kernel, bit for bit: 33 distinct rows (chunks of gemm_rows and a
// chunk of one, so a row in the wrong lane fails), the adversarial rows in the first chunk, 12
// tokens (groups of four and every tail), rows of 1 .. 17 super-blocks (every chain length and a
// tail of the 8-super-block groups), and activations that reach the int16 bounds.
TEST_P(KQuantSuper8Isa, GemmEqualsThisIsasOneTokenKernelBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(4242);
  for (GgmlType type : kTypes) {
    if (!has_gemm(isa, type)) continue;
    const auto id = static_cast<std::uint32_t>(type);
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(id, isa);
    ASSERT_NE(k, nullptr);
    const kernels::MultiDot* m = test::invariant_multi_dot(isa, id);
    ASSERT_TRUE(m != nullptr && m->gemm8 != nullptr) << block_type(type).name << ": no " << isa_name(isa) << " GEMM";
    for (std::int64_t blocks : {1, 7, 8, 9, 17}) {
      const std::int64_t n = blocks * kQK_K;
      const std::size_t row_bytes = block_type(type).row_bytes(n);
      std::vector<std::uint8_t> w;
      for (const auto& r : test::adversarial_weights(type, n, rng)) w.insert(w.end(), r.begin(), r.end());
      const auto more = test::random_matrix(type, 27, n, rng);
      w.insert(w.end(), more.begin(), more.end());
      const auto n_rows = static_cast<std::int64_t>(w.size() / row_bytes);
      std::vector<std::uint8_t> a;
      for (int copy = 0; copy < 2; ++copy) {
        for (const auto& r : test::activation_rows(ActFormat::kQ8_K, n, rng)) a.insert(a.end(), r.begin(), r.end());
        for (std::int8_t code : {std::int8_t{-128}, std::int8_t{127}}) {
          const auto r = constant_q8_k(n, code);
          a.insert(a.end(), r.begin(), r.end());
        }
      }
      const std::size_t a_stride = kernels::act_row_bytes(ActFormat::kQ8_K, n);
      const auto n_act = static_cast<std::int64_t>(a.size() / a_stride);
      ASSERT_NO_FATAL_FAILURE(test::expect_gemm_equals_one_token_kernel(
          std::string(block_type(type).name) + " " + isa_name(isa), *m, *k,
          {w.data(), row_bytes, n_rows, a.data(), a_stride, n}, {n_act, 7, 6, 5, 1}, /*y_stride=*/19,
          /*scratch_offset=*/1));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(X86, KQuantSuper8Isa, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(isa_name(info.param)); });
// Both NEON bundles under qemu (tests/arm): the one-token kernels against the scalar forms, and the
// 8-row GEMMs (Q4_K, Q5_K) against the one-token kernels.
INSTANTIATE_TEST_SUITE_P(Arm, KQuantSuper8Isa, ::testing::Values(Isa::kNeon, Isa::kNeonDotprod), [](const auto& info) {
  return std::string(info.param == Isa::kNeon ? "neon" : "neon_dotprod");
});

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
