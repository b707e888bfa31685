// wisp's own dot orders on NEON (DotKernel::dot_invariant of the plain and the SDOT bundle): each
// kernel equals the same scalar form the x86 kernels equal (test_blocks8_dots, test_float_gemm,
// test_kquant_super8, test_codebook8), bit for bit, so the default numerics give an ARM machine and an x86 one the
// same bits for the same weights and activations. Cross-built for AArch64 and run under
// qemu-aarch64 (tests/arm/): "max" runs both bundles, Cortex-A57 (no SDOT) the plain one; on x86
// the suite skips.
// The WQ types' NEON kernels (one-token and GEMM) run test_wq_blocks8's per-ISA suite, whose Arm
// instantiation is the same check for both bundles.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/float_gemm.h"
#include "invariant_order_checks.h"
#include "random_blocks.h"

namespace wisp {
namespace {

using kernels::ActFormat;
using kernels::DotFn;

struct Order {
  GgmlType type;
  DotFn scalar_form;
  ActFormat act;
};

// Every type with a NEON dot_invariant, with the scalar form of its order.
constexpr Order kOrders[] = {
    {GgmlType::kF32, kernels::scalar::dot_f32_lanes8, ActFormat::kF32},
    {GgmlType::kF16, kernels::scalar::dot_f16_lanes8, ActFormat::kF32},
    {GgmlType::kBF16, kernels::scalar::dot_bf16_lanes8, ActFormat::kF32},
    {GgmlType::kQ4_0, kernels::scalar::dot_q4_0_blocks8, ActFormat::kQ8_0Split},
    {GgmlType::kQ4_1, kernels::scalar::dot_q4_1_blocks8, ActFormat::kQ8_0Split},
    {GgmlType::kQ5_0, kernels::scalar::dot_q5_0_blocks8, ActFormat::kQ8_0Split},
    {GgmlType::kQ5_1, kernels::scalar::dot_q5_1_blocks8, ActFormat::kQ8_0Split},
    {GgmlType::kQ8_0, kernels::scalar::dot_q8_0_blocks8, ActFormat::kQ8_0Split},
    {GgmlType::kQ2_K, kernels::scalar::dot_q2_k_super8, ActFormat::kQ8_K},
    {GgmlType::kQ3_K, kernels::scalar::dot_q3_k_super8, ActFormat::kQ8_K},
    {GgmlType::kQ4_K, kernels::scalar::dot_q4_k_super8, ActFormat::kQ8_K},
    {GgmlType::kQ5_K, kernels::scalar::dot_q5_k_super8, ActFormat::kQ8_K},
    {GgmlType::kQ6_K, kernels::scalar::dot_q6_k_super8, ActFormat::kQ8_K},
    {GgmlType::kIQ4_NL, kernels::scalar::dot_iq4_nl_blocks8, ActFormat::kQ8_0Split},
    {GgmlType::kMXFP4, kernels::scalar::dot_mxfp4_blocks8, ActFormat::kQ8_0Split},
    {GgmlType::kIQ4_XS, kernels::scalar::dot_iq4_xs_super8, ActFormat::kQ8_K},
};

// Split activation rows (ActFormat::kQ8_0Split): from the quantizer (random_blocks.h), and raw
// codes (random in [-127, 127], all +127, all -127: the quantizer's bounds) with random scales
// and consistent code sums and Q8_1 sums.
std::vector<std::vector<std::uint8_t>> split_rows(std::int64_t n, std::mt19937& rng) {
  std::vector<std::vector<std::uint8_t>> out = test::activation_rows(ActFormat::kQ8_0Split, n, rng);
  test::append_raw_split_rows(out, n, rng);
  return out;
}

// f32 activation rows: from random_blocks.h (normal, all equal, tiny with an outlier), and one of
// signed zeros and subnormal values.
std::vector<std::vector<std::uint8_t>> float_rows(std::int64_t n, std::mt19937& rng) {
  std::vector<std::vector<std::uint8_t>> out = test::activation_rows(ActFormat::kF32, n, rng);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 3 == 0 ? -0.0f : normal(rng) * 1e-39f;
  out.emplace_back(x.size() * sizeof(float));
  std::memcpy(out.back().data(), x.data(), out.back().size());
  return out;
}

std::vector<std::vector<std::uint8_t>> act_rows(ActFormat act, std::int64_t n, std::mt19937& rng) {
  if (act == ActFormat::kQ8_0Split) return split_rows(n, rng);
  if (act == ActFormat::kF32) return float_rows(n, rng);
  return test::activation_rows(act, n, rng);
}

// Row lengths: the float types 1 .. 67 values (every tail of the 8-lane groups); the 32-value
// types 1 .. 17 blocks (every tail of the 8-block groups, one group and a tail, two groups and one
// block); the K-quants 1 .. 17 super-blocks; and a few of the real models' lengths.
std::vector<std::int64_t> lengths(ActFormat act) {
  std::vector<std::int64_t> out;
  if (act == ActFormat::kF32) {
    for (std::int64_t n = 1; n <= 67; ++n) out.push_back(n);
    for (std::int64_t n : {576, 1536, 2051}) out.push_back(n);
    return out;
  }
  const std::int64_t unit = act == ActFormat::kQ8_K ? kQK_K : kQK;
  for (std::int64_t b = 1; b <= 17; ++b) out.push_back(b * unit);
  if (act == ActFormat::kQ8_K) {
    out.push_back(33 * kQK_K);
  } else {
    for (std::int64_t n : {576, 2048, 4160}) out.push_back(n);
  }
  return out;
}

class NeonOrders : public ::testing::TestWithParam<Isa> {};

TEST_P(NeonOrders, EqualTheScalarFormsTheX86KernelsEqualBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(77);
  for (const Order& o : kOrders) {
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(o.type), isa);
    ASSERT_NE(k, nullptr);
    ASSERT_NE(k->dot_invariant, nullptr) << block_type(o.type).name << ": no " << isa_name(isa) << " kernel";
    EXPECT_STRNE(k->isa, "scalar");
    ASSERT_EQ(k->act_invariant, o.act) << block_type(o.type).name;
    const std::vector<std::int64_t> ns = lengths(o.act);
    for (std::int64_t n : ns) {
      test::expect_same_bits_as_scalar_form(
          o.type, isa_name(isa), k->dot_invariant, o.scalar_form, {n},
          [&](std::int64_t m) { return act_rows(o.act, m, rng); }, rng);
      if (HasFatalFailure()) return;
    }
  }
}

// MXFP4 again with exponents near 2^0: random exponent bytes reach 2^127, where most sums
// overflow to infinity or NaN and a lane-order difference would not show. Codebook values
// against activation codes over the whole int8 range (-128 included) as well.
TEST_P(NeonOrders, Mxfp4WithModerateExponentsEqualsItsScalarFormBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  const kernels::DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(GgmlType::kMXFP4), isa);
  ASSERT_NE(k, nullptr);
  ASSERT_NE(k->dot_invariant, nullptr);
  std::mt19937 rng(83);
  for (std::int64_t n : lengths(ActFormat::kQ8_0Split)) {
    std::vector<std::vector<std::uint8_t>> acts = test::activation_rows(ActFormat::kQ8_0Split, n, rng);
    test::append_raw_split_rows(acts, n, rng, -128);
    for (auto w : test::adversarial_weights(GgmlType::kMXFP4, n, rng)) {
      for (std::size_t off = 0; off < w.size(); off += sizeof(BlockMXFP4))
        w[off] = static_cast<std::uint8_t>(118 + rng() % 16);
      for (const auto& a : acts) {
        const float got = k->dot_invariant(w.data(), a.data(), n);
        const float want = kernels::scalar::dot_mxfp4_blocks8(w.data(), a.data(), n);
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
            << "MXFP4 " << isa_name(isa) << " n=" << n << ": " << got << " vs " << want;
      }
    }
  }
}

// The float types' tiled GEMM against the one-token kernel, every output bit for bit: rows 1 .. 19
// and 37 (tiles of 4 rows, and of 8 for one token), tokens 1 .. 5, 7 and 9 (tiles of 2), rows of
// 5, 64 and 203 values (a tail of the 8 lanes), strides past the rows' ends, nothing written
// outside the outputs.
TEST_P(NeonOrders, FloatGemmEqualsTheOneTokenKernelBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(79);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16}) {
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    ASSERT_NE(k, nullptr);
    const kernels::FloatGemmFn gemm = kernels::find_float_gemm(*k);
    ASSERT_NE(gemm, nullptr) << block_type(type).name << ": no " << isa_name(isa) << " GEMM";
    for (std::int64_t n : {5, 64, 203}) {
      const std::int64_t max_rows = 37, max_tok = 9;
      const std::size_t packed_bytes = block_type(type).row_bytes(n), row_bytes = packed_bytes + 6;
      const auto packed = test::random_matrix(type, max_rows, n, rng);
      std::vector<std::uint8_t> w(row_bytes * max_rows);
      for (std::int64_t r = 0; r < max_rows; ++r)
        std::memcpy(w.data() + r * row_bytes, packed.data() + r * packed_bytes, packed_bytes);
      const std::size_t a_stride = static_cast<std::size_t>(n) + 3;
      std::vector<float> a(a_stride * max_tok);
      for (auto& v : a) v = normal(rng);
      std::vector<std::int64_t> row_counts{37};
      for (std::int64_t r = 1; r <= 19; ++r) row_counts.push_back(r);
      for (std::int64_t rows : row_counts) {
        for (std::int64_t n_tok : {1, 2, 3, 4, 5, 7, 9}) {
          const std::int64_t y_stride = rows + 2;
          std::vector<float> y(static_cast<std::size_t>(y_stride * n_tok), -1.0f);
          gemm(w.data(), row_bytes, rows, a.data(), a_stride, n_tok, n, y.data(), y_stride);
          for (std::int64_t t = 0; t < n_tok; ++t) {
            for (std::int64_t r = 0; r < rows; ++r) {
              const float want = k->dot_invariant(w.data() + r * row_bytes, a.data() + t * a_stride, n);
              ASSERT_EQ(std::bit_cast<std::uint32_t>(y[t * y_stride + r]), std::bit_cast<std::uint32_t>(want))
                  << block_type(type).name << " " << isa_name(isa) << " n=" << n << " rows " << rows << " tokens "
                  << n_tok << ": row " << r << " token " << t;
            }
            for (std::int64_t r = rows; r < y_stride; ++r) ASSERT_EQ(y[t * y_stride + r], -1.0f) << "wrote past row";
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Arm, NeonOrders, ::testing::Values(Isa::kNeon, Isa::kNeonDotprod), [](const auto& info) {
  return std::string(info.param == Isa::kNeon ? "neon" : "neon_dotprod");
});

}  // namespace
}  // namespace wisp
