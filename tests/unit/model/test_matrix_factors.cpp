// A matrix's per-tensor or per-expert factors (`.scale` tensors) through rows_of: a merged expert
// tensor's expert keeps its own factor, a fused matrix's part the tensor's one factor, and a row
// range that would need two factors of a merged tensor is refused.
#include <gtest/gtest.h>

#include "model/weights.h"
#include "wisp/error.h"

namespace wisp::model {
namespace {

kernels::MatrixView with_factors(const float* f, std::int64_t n_rows, std::int64_t rows_per_scale) {
  static const std::uint8_t bytes[1] = {};
  kernels::MatrixView m{bytes, 0, 32, n_rows, 0};
  m.out_scale = f;
  m.rows_per_scale = rows_per_scale;
  return m;
}

TEST(MatrixFactors, AnExpertOfAMergedTensorKeepsItsFactor) {
  const float f[4] = {0.5f, 2.0f, 3.0f, 4.0f};
  const kernels::MatrixView m = with_factors(f, 12, 3);  // 4 experts of 3 rows
  for (std::int64_t e = 0; e < 4; ++e) {
    const kernels::MatrixView v = rows_of(m, 3 * e, 3);
    ASSERT_EQ(v.out_scale, f + e);
    EXPECT_EQ(v.out_scale[2 / v.rows_per_scale], f[e]);
  }
  const kernels::MatrixView two = rows_of(m, 3, 6);  // experts 1 and 2
  EXPECT_EQ(two.out_scale[0 / two.rows_per_scale], f[1]);
  EXPECT_EQ(two.out_scale[5 / two.rows_per_scale], f[2]);
}

TEST(MatrixFactors, APartOfAFusedMatrixKeepsTheTensorsFactor) {
  const float f[1] = {1.5f};
  const kernels::MatrixView qkv = with_factors(f, 12, 12);
  for (auto [r0, n] : {std::pair<std::int64_t, std::int64_t>{0, 8}, {8, 2}, {10, 2}}) {
    const kernels::MatrixView v = rows_of(qkv, r0, n);
    for (std::int64_t r = 0; r < n; ++r) EXPECT_EQ(v.out_scale[r / v.rows_per_scale], 1.5f) << r0 << " " << r;
  }
}

TEST(MatrixFactors, ARangeAcrossTwoFactorsMidGroupIsRefused) {
  const float f[4] = {1, 2, 3, 4};
  const kernels::MatrixView m = with_factors(f, 12, 3);
  EXPECT_THROW(rows_of(m, 2, 3), Error);
  EXPECT_NO_THROW(rows_of(m, 1, 2));  // inside one expert
}

}  // namespace
}  // namespace wisp::model
