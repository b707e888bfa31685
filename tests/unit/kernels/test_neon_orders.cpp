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
#include "kernels/multi_dots.h"
#include "gemm_bit_checks.h"
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

// The quantized types' prefill GEMMs (MultiDot::gemm8, 8 rows per call) against the one-token
// kernel of the same bundle, every output bit for bit (test::expect_gemm_equals_one_token_kernel):
// the adversarial weights (edge scales, all-0x00, all-0x80 and all-0xff codes) and random rows, 17 rows
// (chunks of 8, 8 and 1), 7, 5 and 3 rows (one chunk of fewer than 8: the lanes past them dropped),
// 1 .. 9 and 12 tokens (the groups of 4 and every remainder), rows of 1, 7, 8, 9, 17 and 64
// blocks (every chain b % 8 empty, full or with a tail), activations at the integer bounds, and
// the scratch off 16-byte alignment.
constexpr GgmlType kGemmTypes[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0};

TEST_P(NeonOrders, QuantizedGemmsEqualTheOneTokenKernelBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(89);
  for (GgmlType type : kGemmTypes) {
    const auto id = static_cast<std::uint32_t>(type);
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(id, isa);
    ASSERT_NE(k, nullptr);
    const kernels::MultiDot* m = test::invariant_multi_dot(isa, id);
    ASSERT_TRUE(m != nullptr && m->gemm8 != nullptr) << block_type(type).name << ": no " << isa_name(isa) << " GEMM";
    ASSERT_EQ(m->gemm_rows, 8);
    const std::int64_t unit = k->act_invariant == ActFormat::kQ8_K ? kQK_K : kQK;
    for (std::int64_t blocks : {1, 7, 8, 9, 17, 64}) {
      const std::int64_t n = blocks * unit;
      const std::size_t row_bytes = block_type(type).row_bytes(n);
      std::vector<std::uint8_t> w;
      for (const auto& r : test::adversarial_weights(type, n, rng)) w.insert(w.end(), r.begin(), r.end());
      auto r80 = test::random_matrix(type, 1, n, rng);
      test::fill_codes(type, r80, 0x80);  // Q8_0: every code -128
      w.insert(w.end(), r80.begin(), r80.end());
      const auto more = test::random_matrix(type, 17 - static_cast<std::int64_t>(w.size() / row_bytes), n, rng);
      w.insert(w.end(), more.begin(), more.end());
      std::vector<std::uint8_t> a;
      while (a.size() < 12 * kernels::act_row_bytes(k->act_invariant, n)) {
        for (const auto& r : act_rows(k->act_invariant, n, rng)) a.insert(a.end(), r.begin(), r.end());
      }
      const std::size_t a_stride = kernels::act_row_bytes(k->act_invariant, n);
      const std::string what = std::string(block_type(type).name) + " " + isa_name(isa);
      for (std::int64_t n_rows : {17, 7, 5, 3}) {
        // Each count from another first row: 7 the adversarial rows and the all-0x80 one, 5 random
        // rows only, 3 the edge scales and the all-0x00 and all-0xff codes.
        const std::size_t first = n_rows == 5 ? 12 : n_rows == 3 ? 3 : 0;
        const std::uint8_t* w0 = w.data() + row_bytes * first;
        ASSERT_NO_FATAL_FAILURE(test::expect_gemm_equals_one_token_kernel(
            what, *m, *k, {w0, row_bytes, n_rows, a.data(), a_stride, n}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 12},
            /*y_stride=*/n_rows + 3, /*scratch_offset=*/n_rows == 5 ? 3 : 0));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Arm, NeonOrders, ::testing::Values(Isa::kNeon, Isa::kNeonDotprod), [](const auto& info) {
  return std::string(info.param == Isa::kNeon ? "neon" : "neon_dotprod");
});

}  // namespace
}  // namespace wisp
