// wisp's own float order for F32/F16/BF16 weights (DotKernel::dot_invariant, x86/float_tiles-inl.h):
//  - every SIMD one-token kernel equals its scalar form (dot_float.cpp, dot_*_lanes8) bit for bit,
//    on every row length 1 .. 67 (all tails of the 8-lane groups) and the real models' lengths,
//    with random, signed-zero, denormal and large values;
//  - the tiled GEMM (float_gemm.h) equals the one-token kernel bit for bit on odd shapes (every
//    row and token remainder of its tiles, one token, row lengths off the vector width);
//  - the order's accuracy against the exact value (double precision over the same weights and f32
//    activations), as a normalized error |y - exact| / sum |w_i a_i| per output, beside
//    llama.cpp's one-token order on the same data (whose F16/BF16 path rounds the activations to
//    the weight type first): the numerics contract of src/kernels/README.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
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

constexpr GgmlType kTypes[] = {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16};

DotFn scalar_form(GgmlType t) {
  switch (t) {
    case GgmlType::kF32: return kernels::scalar::dot_f32_lanes8;
    case GgmlType::kF16: return kernels::scalar::dot_f16_lanes8;
    case GgmlType::kBF16: return kernels::scalar::dot_bf16_lanes8;
    default: return nullptr;
  }
}

std::uint32_t bits(float v) { return std::bit_cast<std::uint32_t>(v); }

// The weight row's values as floats (exact widening), for the exact dot.
std::vector<float> widen(GgmlType type, const std::uint8_t* row, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  block_type(type).dequantize(row, out.data(), n);
  return out;
}

// Activation rows: normal values, signed zeros, denormal-sized values and one large outlier.
std::vector<std::vector<float>> activation_rows(std::int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> out(3, std::vector<float>(static_cast<std::size_t>(n)));
  for (auto& v : out[0]) v = normal(rng);
  for (std::size_t i = 0; i < out[1].size(); ++i) out[1][i] = i % 3 == 0 ? -0.0f : normal(rng) * 1e-39f;
  for (auto& v : out[2]) v = normal(rng) * 1e-3f;
  out[2][static_cast<std::size_t>(n / 2)] = 3e4f;
  return out;
}

class FloatLanes8Isa : public ::testing::TestWithParam<Isa> {};

TEST_P(FloatLanes8Isa, EqualsItsScalarFormBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(41);
  std::vector<std::int64_t> lengths;
  for (std::int64_t n = 1; n <= 67; ++n) lengths.push_back(n);
  for (std::int64_t n : {576, 1536, 2051}) lengths.push_back(n);
  for (GgmlType type : kTypes) {
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    ASSERT_NE(k, nullptr);
    ASSERT_NE(k->dot_invariant, nullptr) << block_type(type).name << ": no " << isa_name(isa) << " kernel";
    ASSERT_EQ(k->act_invariant, ActFormat::kF32);
    for (std::int64_t n : lengths) {
      const auto w = test::random_matrix(type, 1, n, rng);
      for (const auto& a : activation_rows(n, rng)) {
        const float got = k->dot_invariant(w.data(), a.data(), n);
        const float want = scalar_form(type)(w.data(), a.data(), n);
        ASSERT_EQ(bits(got), bits(want)) << block_type(type).name << " " << isa_name(isa) << " n=" << n << ": " << got
                                         << " vs " << want;
      }
    }
  }
}

// The GEMM over every tile remainder: rows 1 .. 19 and 37 (tiles of 4, and of 8 for one token;
// AVX-512: pairs of rows, 4 pairs per tile, an odd row's partner zero), tokens 1 .. 7, 9 and 13
// (tiles of 3; AVX-512: of 5 from 4 tokens on), rows of 5, 64 and 203 values (a tail of the 8
// columns per step) and of 4109 (AVX-512: two whole column blocks of 2048, the accumulators
// parked between them, then a block of one whole step and the tail), with padded strides.
TEST_P(FloatLanes8Isa, TiledGemmEqualsTheOneTokenKernelBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(43);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (GgmlType type : kTypes) {
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    ASSERT_NE(k, nullptr);
    const kernels::FloatGemmFn gemm = kernels::find_float_gemm(*k);
    ASSERT_NE(gemm, nullptr) << block_type(type).name << ": no " << isa_name(isa) << " GEMM";
    for (std::int64_t n : {5, 64, 203, 4109}) {
      const std::int64_t max_rows = 37, max_tok = 13;
      const std::size_t row_bytes = block_type(type).row_bytes(n) + 6;  // a stride past the row's end
      const auto packed = test::random_matrix(type, max_rows, n, rng);
      std::vector<std::uint8_t> w(row_bytes * max_rows);
      for (std::int64_t r = 0; r < max_rows; ++r) {
        std::copy_n(packed.data() + r * block_type(type).row_bytes(n), block_type(type).row_bytes(n),
                    w.data() + r * row_bytes);
      }
      const std::size_t a_stride = static_cast<std::size_t>(n) + 3;
      std::vector<float> a(a_stride * max_tok);
      for (auto& v : a) v = normal(rng);
      std::vector<std::int64_t> row_counts, tok_counts{1, 2, 3, 4, 5, 6, 7, 9, 13};
      for (std::int64_t r = 1; r <= 19; ++r) row_counts.push_back(r);
      row_counts.push_back(37);
      for (std::int64_t rows : row_counts) {
        for (std::int64_t n_tok : tok_counts) {
          const std::int64_t y_stride = rows + 2;
          std::vector<float> y(static_cast<std::size_t>(y_stride * n_tok), -1.0f);
          gemm(w.data(), row_bytes, rows, a.data(), a_stride, n_tok, n, y.data(), y_stride);
          for (std::int64_t t = 0; t < n_tok; ++t) {
            for (std::int64_t r = 0; r < rows; ++r) {
              const float want = k->dot_invariant(w.data() + r * row_bytes, a.data() + t * a_stride, n);
              ASSERT_EQ(bits(y[t * y_stride + r]), bits(want))
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

INSTANTIATE_TEST_SUITE_P(X86, FloatLanes8Isa, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(isa_name(info.param)); });

// The numerics contract per matmul: over random matrices at the real models' row lengths, the
// largest normalized error of wisp's order stays within 2e-6 (llama.cpp's one-token order on the
// same data is printed beside it: for F16/BF16 it first rounds the activations to the weight
// type, an error of its own that wisp's f32 activations avoid).
TEST(FloatLanes8, NormalizedErrorAgainstTheExactValueIsBounded) {
  std::mt19937 rng(2025);
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
      std::vector<std::uint8_t> ref_act(kernels::act_row_bytes(ref->act, n));
      kernels::convert_act_row(ref->act, x.data(), ref_act.data(), n);
      test::NormalizedErrors errors;
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint8_t* wr = w.data() + static_cast<std::size_t>(r) * info.row_bytes(n);
        const std::vector<float> wf = widen(type, wr, n);
        double exact = 0.0, magnitude = 0.0;
        for (std::int64_t i = 0; i < n; ++i) {
          exact += static_cast<double>(wf[i]) * x[i];
          magnitude += std::abs(static_cast<double>(wf[i]) * x[i]);
        }
        const double fast = scalar_form(type)(wr, x.data(), n);
        const double llama = ref->dot(wr, ref_act.data(), n);
        errors.add(fast, llama, exact, magnitude);
      }
      errors.expect_within(info.name, n, 2e-6);
    }
  }
}

}  // namespace
}  // namespace wisp
