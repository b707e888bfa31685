// Every SIMD dot kernel (each ISA path this CPU can run) against the scalar reference, for bit
// equality: the kernels keep the reference's float order, so "close" would hide a lane-order bug
// that later flips a token. Random and adversarial weights (all-zero and all-one bytes, extreme
// codes, zero/subnormal/largest scales), activations from the quantizers and raw adversarial codes
// (-128 included), and rows of 1, 2, 3 and many blocks (tails of every unroll, and long rows).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "random_blocks.h"

namespace wisp {
namespace {

using kernels::ActFormat;
using kernels::DotFn;
using kernels::DotKernel;

constexpr GgmlType kTypes[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                               GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K};

void expect_same_bits(DotFn simd, DotFn ref, const char* what, const std::vector<std::uint8_t>& w,
                      const std::vector<std::uint8_t>& a, std::int64_t n) {
  if (simd == ref) return;
  const float got = simd(w.data(), a.data(), n);
  const float want = ref(w.data(), a.data(), n);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
      << what << " n=" << n << ": " << got << " vs " << want;
}

class IsaDots : public ::testing::TestWithParam<Isa> {};

TEST_P(IsaDots, EveryVariantEqualsScalarBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(1234);
  for (GgmlType type : kTypes) {
    const DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    const DotKernel* s = kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(type));
    ASSERT_NE(k, nullptr);
    ASSERT_NE(s, nullptr);
    EXPECT_STREQ(k->isa, isa_name(isa)) << block_type(type).name;
    EXPECT_NE(k->dot, s->dot) << block_type(type).name << ": no " << isa_name(isa) << " kernel to test";
    const std::int64_t block = kernels::act_block_elems(k->act);
    // 130 blocks: a long row (33280 values of a K-quant, as in a large model's FFN).
    for (std::int64_t blocks : {1, 2, 3, 7, 18, 130}) {
      const std::int64_t n = blocks * block;
      for (const auto& a : test::activation_rows(k->act, n, rng)) {
        for (const auto& w : test::adversarial_weights(type, n, rng)) {
          const std::string name = std::string(block_type(type).name) + " " + isa_name(isa);
          expect_same_bits(k->dot, s->dot, (name + " one-token").c_str(), w, a, n);
          if (k->dot_batched) expect_same_bits(k->dot_batched, s->dot_batched, (name + " batched").c_str(), w, a, n);
          if (k->dot_repacked)
            expect_same_bits(k->dot_repacked, s->dot_repacked, (name + " repacked").c_str(), w, a, n);
          if (k->dot_repacked_x4) {
            expect_same_bits(k->dot_repacked_x4, s->dot_repacked_x4, (name + " repacked-x4").c_str(), w, a, n);
          }
        }
      }
    }
  }
}

// The codebook, ternary and grid types (x86/nonlinear_dots-inl.h, x86/ternary_dots-inl.h,
// x86/grid_dots-inl.h on x86; neon/*-inl.h on AArch64): every variant equals its scalar reference,
// on random and adversarial rows with even and odd block counts (IQ1_M has no plain half field: its
// scale bytes stay random, which includes infinite and NaN d; so do MXFP4's exponents and NVFP4's
// E4M3 scales).
TEST_P(IsaDots, CodebookTernaryAndGridTypesEqualScalarBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(4321);
  for (GgmlType type : {GgmlType::kIQ4_NL, GgmlType::kIQ4_XS, GgmlType::kMXFP4, GgmlType::kNVFP4, GgmlType::kTQ1_0,
                        GgmlType::kTQ2_0, GgmlType::kIQ2_XXS, GgmlType::kIQ2_XS, GgmlType::kIQ2_S, GgmlType::kIQ3_XXS,
                        GgmlType::kIQ3_S, GgmlType::kIQ1_S, GgmlType::kIQ1_M}) {
    const DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    const DotKernel* s = kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(type));
    ASSERT_NE(k, nullptr);
    ASSERT_NE(s, nullptr);
    EXPECT_STREQ(k->isa, isa_name(isa)) << block_type(type).name;
    EXPECT_NE(k->dot, s->dot) << block_type(type).name << ": no " << isa_name(isa) << " kernel to test";
    // Every variant the reference has is replaced (none left scalar behind a SIMD one-token dot).
    if (s->dot_batched) EXPECT_NE(k->dot_batched, s->dot_batched) << block_type(type).name << " batched";
    if (s->dot_repacked) EXPECT_NE(k->dot_repacked, s->dot_repacked) << block_type(type).name << " repacked";
    const std::int64_t block = block_type(type).block_elems;
    for (std::int64_t blocks : {1, 2, 3, 7, 18, 130}) {
      const std::int64_t n = blocks * block;
      for (const auto& a : test::activation_rows(k->act, n, rng)) {
        for (const auto& w : test::adversarial_weights(type, n, rng)) {
          const std::string name = std::string(block_type(type).name) + " " + isa_name(isa);
          expect_same_bits(k->dot, s->dot, (name + " one-token").c_str(), w, a, n);
          if (k->dot_batched) expect_same_bits(k->dot_batched, s->dot_batched, (name + " batched").c_str(), w, a, n);
          if (k->dot_repacked)
            expect_same_bits(k->dot_repacked, s->dot_repacked, (name + " repacked").c_str(), w, a, n);
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(X86, IsaDots, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(isa_name(info.param)); });
// AArch64 (cross-built and run under qemu-aarch64 by tests/arm/): plain NEON and NEON with SDOT.
INSTANTIATE_TEST_SUITE_P(Arm, IsaDots, ::testing::Values(Isa::kNeon, Isa::kNeonDotprod), [](const auto& info) {
  return info.param == Isa::kNeon ? std::string("neon") : std::string("neon_dotprod");
});

TEST(IsaDots, ScalarIsAlwaysAvailableAndForcedPathsResolve) {
  EXPECT_TRUE(isa_supported(Isa::kScalar, detect_cpu_features()));
  EXPECT_EQ(parse_isa("avx2"), Isa::kAvx2);
  EXPECT_EQ(parse_isa("neon"), Isa::kNeon);
  EXPECT_EQ(parse_isa("neon-dotprod"), Isa::kNeonDotprod);
  EXPECT_EQ(parse_isa("sve"), std::nullopt);
  const DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(GgmlType::kQ4_1), Isa::kScalar);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->isa, "scalar");
  EXPECT_EQ(k->dot, kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(GgmlType::kQ4_1))->dot);
}

}  // namespace
}  // namespace wisp
