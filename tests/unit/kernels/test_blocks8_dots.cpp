// wisp's own dot order for the 32-value types (DotKernel::dot_invariant, kernels/dot_blocks8.cpp):
//  - the split activation layout carries exactly Q8_0's codes and scales;
//  - every SIMD kernel equals its scalar form bit for bit (random and adversarial weights and
//    activations, rows of 1 .. 130 blocks: every tail of the 8-block groups);
//  - the order's accuracy against the exact value (double precision over the same quantized
//    weights and activations), as a normalized error |y - exact| / sum |w_i a_i| per output, next
//    to the llama.cpp order's on the same data: the numerics contract of src/kernels/README.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/multi_dots.h"
#include "gemm_bit_checks.h"
#include "invariant_order_checks.h"
#include "random_blocks.h"

namespace wisp {
namespace {

using kernels::ActFormat;
using kernels::DotFn;

constexpr GgmlType kTypes[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1, GgmlType::kQ8_0};

DotFn scalar_form(GgmlType t) {
  switch (t) {
    case GgmlType::kQ4_0: return kernels::scalar::dot_q4_0_blocks8;
    case GgmlType::kQ4_1: return kernels::scalar::dot_q4_1_blocks8;
    case GgmlType::kQ5_0: return kernels::scalar::dot_q5_0_blocks8;
    case GgmlType::kQ5_1: return kernels::scalar::dot_q5_1_blocks8;
    case GgmlType::kQ8_0: return kernels::scalar::dot_q8_0_blocks8;
    default: return nullptr;
  }
}

// Split rows: from the quantizer (normal values, a constant, tiny values with one outlier), and
// raw codes (random in [-127, 127], and all +-127, the integer bounds) with random scales.
std::vector<std::vector<std::uint8_t>> split_rows(std::int64_t n, std::mt19937& rng) {
  std::vector<std::vector<std::uint8_t>> out = test::activation_rows(ActFormat::kQ8_0Split, n, rng);
  test::append_raw_split_rows(out, n, rng);
  return out;
}

TEST(Blocks8, SplitActivationsCarryQ8_0sCodesAndScalesAndQ8_1sSums) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::int64_t n = 576;
  std::vector<float> x(n);
  for (auto& v : x) v = normal(rng);
  std::vector<std::uint8_t> q8(kernels::act_row_bytes(ActFormat::kQ8_0, n)),
      q81(kernels::act_row_bytes(ActFormat::kQ8_1, n)), split(kernels::act_row_bytes(ActFormat::kQ8_0Split, n));
  kernels::convert_act_row(ActFormat::kQ8_0, x.data(), q8.data(), n);
  kernels::convert_act_row(ActFormat::kQ8_1, x.data(), q81.data(), n);
  kernels::convert_act_row(ActFormat::kQ8_0Split, x.data(), split.data(), n);
  const auto* blocks = reinterpret_cast<const BlockQ8_0*>(q8.data());
  const auto* blocks1 = reinterpret_cast<const kernels::BlockQ8_1*>(q81.data());
  const kernels::Q8_0SplitRow s = kernels::q8_0_split_row(split.data(), n);
  for (std::int64_t b = 0; b < n / 32; ++b) {
    ASSERT_EQ(s.d[b], f16_to_f32(blocks[b].d)) << b;
    std::int32_t sum = 0;
    for (int j = 0; j < 32; ++j) {
      ASSERT_EQ(s.qs[b * 32 + j], blocks[b].qs[j]) << b << " " << j;
      sum += blocks[b].qs[j];
    }
    ASSERT_EQ(s.sum[b], sum) << b;
    ASSERT_EQ(s.s[b], f16_to_f32(blocks1[b].s)) << b;
  }
}

class Blocks8Isa : public ::testing::TestWithParam<Isa> {};

TEST_P(Blocks8Isa, EqualsItsScalarFormBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(99);
  for (GgmlType type : kTypes) {
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    ASSERT_NE(k, nullptr);
    ASSERT_NE(k->dot_invariant, nullptr) << block_type(type).name << ": no " << isa_name(isa) << " kernel";
    ASSERT_EQ(k->act_invariant, ActFormat::kQ8_0Split);
    test::expect_same_bits_as_scalar_form(
        type, isa_name(isa), k->dot_invariant, scalar_form(type),
        {32, 64, 96, 224, 256, 288, 480, 512, 544, 576, 2048, 4160}, [&](std::int64_t n) { return split_rows(n, rng); },
        rng);
  }
}

// The prefill GEMM of each ISA (MultiDot::gemm8: 8 rows per call on AVX2, 16 with AVX-512 VNNI)
// against that ISA's own one-token kernel, the one the matmul calls for decode: every output
// bit-identical (batch invariance), for full chunks and a chunk of one row (nothing written past it), token counts in
// and beside the GEMM's groups, rows of one block to a group plus a tail, weights with edge scales, all-0x00/0x80/0xff
// codes (Q8_0: 0x80 is -128, the code the VNNI path's offset of 128 maps to 0) and activations at the integer bounds
// (all +-127).
TEST_P(Blocks8Isa, GemmEqualsThisIsasOneTokenKernelBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(321);
  for (GgmlType type : kTypes) {
    const auto id = static_cast<std::uint32_t>(type);
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(id, isa);
    ASSERT_NE(k, nullptr);
    const kernels::MultiDot* m = test::invariant_multi_dot(isa, id);
    ASSERT_TRUE(m != nullptr && m->gemm8 != nullptr) << block_type(type).name << ": no " << isa_name(isa) << " GEMM";
    for (std::int64_t blocks : {1, 8, 9, 17, 64}) {
      const std::int64_t n = blocks * 32;
      const std::size_t row_bytes = block_type(type).row_bytes(n);
      std::vector<std::uint8_t> w;
      for (const auto& r : test::adversarial_weights(type, n, rng)) w.insert(w.end(), r.begin(), r.end());
      auto r80 = test::random_matrix(type, 1, n, rng);
      test::fill_codes(type, r80, 0x80);
      w.insert(w.end(), r80.begin(), r80.end());
      const auto more = test::random_matrix(type, 10, n, rng);
      w.insert(w.end(), more.begin(), more.end());  // 17 rows: chunks of 16 + 1, or 8 + 8 + 1
      const std::int64_t n_rows = static_cast<std::int64_t>(w.size() / row_bytes);
      std::vector<std::uint8_t> a;
      // First a full group of the 16-row GEMM (8 tokens) of random rows, so that a slip at any
      // token position of a group shows, then the edge rows.
      for (int t = 0; t < 8; ++t) {
        const auto r = test::activation_rows(ActFormat::kQ8_0Split, n, rng)[0];
        a.insert(a.end(), r.begin(), r.end());
      }
      for (const auto& r : split_rows(n, rng)) a.insert(a.end(), r.begin(), r.end());
      for (const auto& r : split_rows(n, rng)) a.insert(a.end(), r.begin(), r.end());
      const std::size_t a_stride = kernels::act_row_bytes(ActFormat::kQ8_0Split, n);
      const auto n_act = static_cast<std::int64_t>(a.size() / a_stride);  // 20 tokens
      ASSERT_NO_FATAL_FAILURE(test::expect_gemm_equals_one_token_kernel(
          std::string(block_type(type).name) + " " + isa_name(isa), *m, *k,
          {w.data(), row_bytes, n_rows, a.data(), a_stride, n}, {n_act, 12, 8, 7, 4, 1}, /*y_stride=*/17,
          /*scratch_offset=*/0));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(X86, Blocks8Isa, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

// The numerics contract per matmul: over random matrices at the real models' row lengths, the
// largest normalized error of wisp's order stays within 2e-6 (llama.cpp's own order, measured on
// the same data, is printed beside it; both are float rounding of the same exact integer sums).
TEST(Blocks8, NormalizedErrorAgainstTheExactValueIsBounded) {
  std::mt19937 rng(2024);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (GgmlType type : kTypes) {
    const BlockTypeInfo& info = block_type(type);
    const kernels::DotKernel* ref = kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(type));
    ASSERT_NE(ref, nullptr);
    for (std::int64_t n : {576, 1536, 2048, 8192}) {
      const std::int64_t rows = 64;
      const auto w = test::random_matrix(type, rows, n, rng);
      std::vector<float> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = normal(rng);
      x[7] = 30.0f;  // an outlier channel, as real activations have
      std::vector<std::uint8_t> q8(kernels::act_row_bytes(ref->act, n)),
          split(kernels::act_row_bytes(ActFormat::kQ8_0Split, n));
      kernels::convert_act_row(ref->act, x.data(), q8.data(), n);
      kernels::convert_act_row(ActFormat::kQ8_0Split, x.data(), split.data(), n);
      const kernels::Q8_0SplitRow s = kernels::q8_0_split_row(split.data(), n);
      std::vector<float> wrow(static_cast<std::size_t>(n));
      test::NormalizedErrors errors;
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint8_t* wr = w.data() + static_cast<std::size_t>(r) * info.row_bytes(n);
        info.dequantize(wr, wrow.data(), n);
        double exact = 0.0, magnitude = 0.0;
        for (std::int64_t i = 0; i < n; ++i) {
          const double a = static_cast<double>(s.d[i / 32]) * s.qs[i];
          exact += wrow[i] * a;
          magnitude += std::abs(wrow[i] * a);
        }
        if (type == GgmlType::kQ4_1 || type == GgmlType::kQ5_1) {
          // Both orders take the minimum's term as m * s with Q8_1's half s (not m * d * sum).
          for (std::int64_t b = 0; b < n / 32; ++b) {
            std::uint16_t m;
            std::memcpy(&m, wr + b * info.block_bytes + 2, 2);
            exact += static_cast<double>(f16_to_f32(m)) *
                     (static_cast<double>(s.s[b]) - static_cast<double>(s.d[b]) * s.sum[b]);
          }
        }
        const double fast = scalar_form(type)(wr, split.data(), n);
        const double llama = ref->dot(wr, q8.data(), n);
        errors.add(fast, llama, exact, magnitude);
      }
      errors.expect_within(info.name, n, 2e-6);
    }
  }
}

}  // namespace
}  // namespace wisp
