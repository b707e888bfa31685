// The dequant-matmul for every block type wisp multiplies, against references in double:
//  - exact: the weight dequantized by the formats registry times the *converted* activation
//    dequantized: only float accumulation order may differ, so the tolerance is tiny;
//  - end to end: the same weight times the original f32 activation, within the error the
//    activation conversion is allowed (half a quantization step per value).
// Plus shapes with ragged row chunks, batches, thread-count independence and bad input.
#include "kernels/matmul.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "formats/block_types.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "random_blocks.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using kernels::ActFormat;

// The activation row as the kernel sees it, back in float.
std::vector<float> dequantize_act(ActFormat f, const std::vector<std::uint8_t>& a, std::int64_t n) {
  std::vector<float> out(static_cast<std::size_t>(n));
  switch (f) {
    case ActFormat::kF32: std::memcpy(out.data(), a.data(), out.size() * 4); break;
    case ActFormat::kF16:
    case ActFormat::kBF16: {
      const auto* h = reinterpret_cast<const std::uint16_t*>(a.data());
      for (std::int64_t i = 0; i < n; ++i) out[i] = f == ActFormat::kF16 ? f16_to_f32(h[i]) : bf16_to_f32(h[i]);
      break;
    }
    case ActFormat::kQ8_0: block_type(GgmlType::kQ8_0).dequantize(a.data(), out.data(), n); break;
    case ActFormat::kQ8_1: {
      const auto* b = reinterpret_cast<const kernels::BlockQ8_1*>(a.data());
      for (std::int64_t i = 0; i < n; ++i) out[i] = f16_to_f32(b[i / 32].d) * b[i / 32].qs[i % 32];
      break;
    }
    case ActFormat::kQ8_K:
    case ActFormat::kQ8_Kx4: {
      const auto* b = reinterpret_cast<const kernels::BlockQ8_K*>(a.data());
      for (std::int64_t i = 0; i < n; ++i) out[i] = b[i / 256].d * b[i / 256].qs[i % 256];
      break;
    }
    case ActFormat::kQ8_0Split: {
      const kernels::Q8_0SplitRow s = kernels::q8_0_split_row(a.data(), n);
      for (std::int64_t i = 0; i < n; ++i) out[i] = s.d[i / 32] * s.qs[i];
      break;
    }
  }
  return out;
}

struct Case {
  GgmlType type;
  std::int64_t n_cols;
};

// Every float order the table holds for a type (one token, batched, repacked GEMV and GEMM, and
// wisp's own batch-invariant order), with the activation format each reads.
std::vector<std::tuple<const char*, kernels::DotFn, ActFormat>> variants(const kernels::DotKernel& k) {
  std::vector<std::tuple<const char*, kernels::DotFn, ActFormat>> v{{"one-token", k.dot, k.act}};
  if (k.dot_batched) v.emplace_back("batched", k.dot_batched, k.act);
  if (k.dot_repacked) v.emplace_back("repacked", k.dot_repacked, k.act);
  if (k.dot_repacked_x4) v.emplace_back("repacked-x4", k.dot_repacked_x4, k.act);
  if (k.dot_invariant) v.emplace_back("invariant", k.dot_invariant, k.act_invariant);
  return v;
}

class MatmulTypes : public ::testing::TestWithParam<Case> {};

// Each variant against two double-precision references:
//  - exact: the weight dequantized by the formats registry times the *converted* activation
//    dequantized; only float accumulation order may differ, so the tolerance is tiny;
//  - end to end: the same weight times the original f32 activation, within the error the
//    activation conversion is allowed (its per-value rounding, known exactly here).
TEST_P(MatmulTypes, EveryVariantMatchesDoublePrecisionReferences) {
  const Case c = GetParam();
  const BlockTypeInfo& info = block_type(c.type);
  const kernels::DotKernel* k = kernels::find_dot_kernel(static_cast<std::uint32_t>(c.type));
  ASSERT_NE(k, nullptr) << info.name;
  std::mt19937 rng(1234 + static_cast<unsigned>(c.type));
  const std::int64_t n_rows = 13;
  const std::int64_t n_tok = 3;
  const auto wbytes = test::random_matrix(c.type, n_rows, c.n_cols, rng);
  const kernels::MatrixView w{wbytes.data(), static_cast<std::uint32_t>(c.type), c.n_cols, n_rows,
                              info.row_bytes(c.n_cols)};

  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n_tok * c.n_cols));
  for (auto& v : x) v = normal(rng);
  x[5] = 40.0f;  // an outlier: one block with a much larger scale

  std::vector<float> wrow(static_cast<std::size_t>(c.n_cols));
  for (const auto& [name, dot, fmt] : variants(*k)) {
    for (std::int64_t t = 0; t < n_tok; ++t) {
      const float* xt = x.data() + t * c.n_cols;
      std::vector<std::uint8_t> act(kernels::act_row_bytes(fmt, c.n_cols));
      kernels::convert_act_row(fmt, xt, act.data(), c.n_cols);
      const auto a = dequantize_act(fmt, act, c.n_cols);
      for (std::int64_t r = 0; r < n_rows; ++r) {
        info.dequantize(w.row(r), wrow.data(), c.n_cols);
        double exact = 0.0, magnitude = 0.0, ideal = 0.0, conv_err = 0.0;
        for (std::int64_t i = 0; i < c.n_cols; ++i) {
          exact += static_cast<double>(wrow[i]) * a[i];
          magnitude += std::abs(static_cast<double>(wrow[i]) * a[i]);
          ideal += static_cast<double>(wrow[i]) * xt[i];
          conv_err += std::abs(static_cast<double>(wrow[i])) * std::abs(static_cast<double>(a[i]) - xt[i]);
        }
        // Q8_1 carries s = d * sum(q) as a half, from the float d rather than the half d the codes
        // use: the m * s term of Q4_1/Q5_1 is exact only to ~2 half ulps (ggml's numerics).
        double s_err = 0.0;
        // The split layout carries the same s (as a float) for Q4_1's invariant kernel.
        const bool has_min = c.type == GgmlType::kQ4_1 || c.type == GgmlType::kQ5_1;
        if (has_min && (fmt == ActFormat::kQ8_1 || fmt == ActFormat::kQ8_0Split)) {
          const auto* blocks = reinterpret_cast<const kernels::BlockQ8_1*>(act.data());
          const kernels::Q8_0SplitRow split = kernels::q8_0_split_row(act.data(), c.n_cols);
          for (std::int64_t b = 0; b < c.n_cols / 32; ++b) {
            std::uint16_t m;
            std::memcpy(&m, w.row(r) + b * info.block_bytes + 2, 2);  // Q4_1/Q5_1: m follows d
            const float sb = fmt == ActFormat::kQ8_1 ? f16_to_f32(blocks[b].s) : split.s[b];
            s_err += std::abs(f16_to_f32(m) * sb) * std::ldexp(1.0, -10);
          }
        }
        const double got = dot(w.row(r), act.data(), c.n_cols);
        const double tol = 2e-6 * magnitude + s_err + 1e-6;
        ASSERT_NEAR(got, exact, tol) << info.name << " " << name << " row " << r << " token " << t;
        ASSERT_NEAR(got, ideal, conv_err + tol) << info.name << " " << name << " row " << r << " token " << t;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryType, MatmulTypes,
                         ::testing::Values(Case{GgmlType::kF32, 96}, Case{GgmlType::kF16, 96},
                                           Case{GgmlType::kBF16, 96}, Case{GgmlType::kQ4_0, 96},
                                           Case{GgmlType::kQ4_1, 96}, Case{GgmlType::kQ5_0, 96},
                                           Case{GgmlType::kQ5_1, 96}, Case{GgmlType::kQ8_0, 96},
                                           Case{GgmlType::kQ2_K, 512}, Case{GgmlType::kQ3_K, 512},
                                           Case{GgmlType::kQ4_K, 512}, Case{GgmlType::kQ5_K, 512},
                                           Case{GgmlType::kQ6_K, 512}),
                         [](const auto& p) { return std::string(block_type(p.param.type).name); });

TEST(Matmul, PicksGgmlsKernelByBatchSizeAndRepacking) {
  const kernels::DotKernel* q6 = kernels::find_dot_kernel(static_cast<std::uint32_t>(GgmlType::kQ6_K));
  EXPECT_EQ(q6->select(640, 1, 0), q6->dot);
  EXPECT_EQ(q6->select(640, 7, 3), q6->dot);
  EXPECT_EQ(q6->select(640, 8, 3), q6->dot_batched);  // ggml's tiled GEMM from 8 tokens
  const kernels::DotKernel* q4k = kernels::find_dot_kernel(static_cast<std::uint32_t>(GgmlType::kQ4_K));
  EXPECT_EQ(q4k->select(640, 1, 0), q4k->dot_repacked);     // rows % 8 == 0: repacked GEMV
  EXPECT_EQ(q4k->select(640, 6, 3), q4k->dot_repacked_x4);  // tokens 0..3: GEMM
  EXPECT_EQ(q4k->select(640, 6, 4), q4k->dot_repacked);     // the tail of 2: GEMV
  EXPECT_EQ(q4k->act_for(640, 6, 3), ActFormat::kQ8_Kx4);
  EXPECT_EQ(q4k->act_for(640, 6, 5), ActFormat::kQ8_K);
  EXPECT_EQ(q4k->select(644, 9, 0), q4k->dot_batched);  // not repackable: tiled
  const kernels::DotKernel* q8 = kernels::find_dot_kernel(static_cast<std::uint32_t>(GgmlType::kQ8_0));
  EXPECT_EQ(q8->select(640, 100, 5), q8->dot);  // tinyBLAS adds in vec_dot's order
}

// matmul() applies the per-token choice: each output equals the selected kernel on the token's
// activation converted as act_for() says.
TEST(Matmul, AppliesThePerTokenChoice) {
  std::mt19937 rng(21);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (auto [type, rows, n_tok] : {std::tuple{GgmlType::kQ4_K, std::int64_t{16}, std::int64_t{6}},
                                   std::tuple{GgmlType::kQ6_K, std::int64_t{9}, std::int64_t{9}},
                                   std::tuple{GgmlType::kQ4_0, std::int64_t{8}, std::int64_t{3}}}) {
    const std::int64_t cols = 512;
    const auto wbytes = test::random_matrix(type, rows, cols, rng);
    const kernels::MatrixView w{wbytes.data(), static_cast<std::uint32_t>(type), cols, rows,
                                block_type(type).row_bytes(cols)};
    std::vector<float> x(static_cast<std::size_t>(n_tok * cols));
    for (auto& v : x) v = normal(rng);
    x[3] = 2.0f;  // a +-max tie in token 0's first super-block: the two Q8_K quantizers differ
    x[7] = -2.0f;
    std::vector<float> y(static_cast<std::size_t>(n_tok * rows));
    kernels::MatmulScratch scratch;
    ThreadPool pool(2);
    kernels::matmul(w, x.data(), cols, n_tok, y.data(), rows, scratch, pool);
    const kernels::DotKernel* k = kernels::find_dot_kernel(static_cast<std::uint32_t>(type));
    for (std::int64_t t = 0; t < n_tok; ++t) {
      const ActFormat f = k->act_for(rows, n_tok, t);
      std::vector<std::uint8_t> act(kernels::act_row_bytes(f, cols));
      kernels::convert_act_row(f, x.data() + t * cols, act.data(), cols);
      for (std::int64_t r = 0; r < rows; ++r) {
        ASSERT_EQ(y[t * rows + r], k->select(rows, n_tok, t)(w.row(r), act.data(), cols))
            << block_type(type).name << " token " << t << " row " << r;
      }
    }
  }
}

// The batch-invariant order: every token of every batch size through the kernel's one invariant
// function (wisp's own order where the ISA has one) on its own row's activation, so a token's
// outputs are the same alone or batched (4+ tokens take the tiled paths, 1-3 the row paths).
TEST(Matmul, BatchInvariantOrderIsOneFunctionForEveryToken) {
  std::mt19937 rng(23);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (GgmlType type : {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K,
                        GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16}) {
    const std::int64_t rows = 40, cols = 768;
    const auto wbytes = test::random_matrix(type, rows, cols, rng);
    const kernels::MatrixView w{wbytes.data(), static_cast<std::uint32_t>(type), cols, rows,
                                block_type(type).row_bytes(cols)};
    const kernels::DotKernel* k = kernels::find_dot_kernel(static_cast<std::uint32_t>(type));
    const std::int64_t max_tok = 9;
    std::vector<float> x(static_cast<std::size_t>(max_tok * cols));
    for (auto& v : x) v = normal(rng);
    kernels::MatmulScratch scratch;
    ThreadPool pool(2);
    for (std::int64_t n_tok : {1, 3, 4, 9}) {
      std::vector<float> y(static_cast<std::size_t>(n_tok * rows));
      kernels::matmul(w, x.data(), cols, n_tok, y.data(), rows, scratch, pool, kernels::DotOrder::kBatchInvariant);
      for (std::int64_t t = 0; t < n_tok; ++t) {
        const ActFormat f = k->act_for(rows, n_tok, t, kernels::DotOrder::kBatchInvariant);
        const kernels::DotFn dot = k->select(rows, n_tok, t, kernels::DotOrder::kBatchInvariant);
        if (k->dot_invariant != nullptr) {
          EXPECT_EQ(dot, k->dot_invariant);
          EXPECT_EQ(f, k->act_invariant);
        }
        std::vector<std::uint8_t> act(kernels::act_row_bytes(f, cols));
        kernels::convert_act_row(f, x.data() + t * cols, act.data(), cols);
        for (std::int64_t r = 0; r < rows; ++r) {
          ASSERT_EQ(y[t * rows + r], dot(w.row(r), act.data(), cols))
              << block_type(type).name << " n_tok " << n_tok << " token " << t << " row " << r;
        }
      }
    }
  }
}

TEST(Matmul, ResultDoesNotDependOnThreadCountOrBatch) {
  std::mt19937 rng(7);
  const std::int64_t rows = 70, cols = 256, n_tok = 5;
  const auto wbytes = test::random_matrix(GgmlType::kQ4_K, rows, cols, rng);
  const kernels::MatrixView w{wbytes.data(), static_cast<std::uint32_t>(GgmlType::kQ4_K), cols, rows,
                              block_type(GgmlType::kQ4_K).row_bytes(cols)};
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n_tok * cols));
  for (auto& v : x) v = normal(rng);
  kernels::MatmulScratch scratch;
  std::vector<float> y1(static_cast<std::size_t>(n_tok * rows)), y4(y1.size()), single(static_cast<std::size_t>(rows));
  ThreadPool one(1), two(2), four(4);
  kernels::matmul(w, x.data(), cols, n_tok, y1.data(), rows, scratch, one);
  kernels::matmul(w, x.data(), cols, n_tok, y4.data(), rows, scratch, four);
  EXPECT_EQ(y1, y4);
  for (std::int64_t t = 0; t < n_tok; ++t) {
    kernels::matmul(w, x.data() + t * cols, cols, 1, single.data(), rows, scratch, two);
    for (std::int64_t r = 0; r < rows; ++r) ASSERT_EQ(single[r], y1[t * rows + r]);
  }
}

TEST(Matmul, StridedInputAndOutput) {
  std::mt19937 rng(9);
  const std::int64_t rows = 8, cols = 64;
  const auto wbytes = test::random_matrix(GgmlType::kQ8_0, rows, cols, rng);
  const kernels::MatrixView w{wbytes.data(), static_cast<std::uint32_t>(GgmlType::kQ8_0), cols, rows,
                              block_type(GgmlType::kQ8_0).row_bytes(cols)};
  std::vector<float> x(2 * 100, 0.5f), y(2 * 20, -1.0f), ref(2 * rows);
  kernels::MatmulScratch scratch;
  ThreadPool pool(1);
  kernels::matmul(w, x.data(), 100, 2, y.data(), 20, scratch, pool);
  std::vector<float> xc(2 * cols, 0.5f);
  kernels::matmul(w, xc.data(), cols, 2, ref.data(), rows, scratch, pool);
  for (int t = 0; t < 2; ++t) {
    for (int r = 0; r < rows; ++r) EXPECT_EQ(y[t * 20 + r], ref[t * rows + r]);
    for (int r = rows; r < 20; ++r) EXPECT_EQ(y[t * 20 + r], -1.0f);  // untouched past n_rows
  }
}

TEST(Matmul, RejectsTypesWithoutKernelAndRaggedRows) {
  std::vector<std::uint8_t> bytes(1024);
  std::vector<float> x(256), y(4);
  kernels::MatmulScratch scratch;
  ThreadPool pool(1);
  const kernels::MatrixView bad_type{bytes.data(), 99, 32, 1, 34};
  EXPECT_THROW(kernels::matmul(bad_type, x.data(), 32, 1, y.data(), 1, scratch, pool), Error);
  const kernels::MatrixView ragged{bytes.data(), static_cast<std::uint32_t>(GgmlType::kQ4_K), 100, 1, 144};
  try {
    kernels::matmul(ragged, x.data(), 100, 1, y.data(), 1, scratch, pool);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple"), std::string::npos) << e.what();
  }
}

TEST(Matmul, DequantizeRowMatchesRegistryAndChecksRange) {
  std::mt19937 rng(3);
  const auto wbytes = test::random_matrix(GgmlType::kQ6_K, 4, 256, rng);
  const kernels::MatrixView w{wbytes.data(), static_cast<std::uint32_t>(GgmlType::kQ6_K), 256, 4, 210};
  std::vector<float> a(256), b(256);
  kernels::dequantize_row(w, 2, a.data());
  block_type(GgmlType::kQ6_K).dequantize(wbytes.data() + 2 * 210, b.data(), 256);
  EXPECT_EQ(a, b);
  EXPECT_THROW(kernels::dequantize_row(w, 4, a.data()), Error);
}

}  // namespace
}  // namespace wisp
