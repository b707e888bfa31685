// The scalar replicas of ggml's SIMD steps: reduction trees (checked on values where the grouping
// shows in the result), the vector exp (accuracy against libm and its special cases), silu.
#include "kernels/ggml_order.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace wisp {
namespace {

namespace g = kernels::ggml;

TEST(GgmlOrder, Hsum8Grouping) {
  // ((x0+x4) + (x2+x6)) + ((x1+x5) + (x3+x7)): 1e8 cancels inside its pair before 1 is added.
  const float x[8] = {1e8f, 1.0f, 0.0f, 0.0f, -1e8f, 0.0f, 0.0f, 0.0f};
  EXPECT_EQ(g::hsum8(x), 1.0f);
  const float y[8] = {1e8f, -1e8f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  // (1e8 + 1) + (-1e8): the 1 is lost in float, as in the SIMD fold.
  EXPECT_EQ(g::hsum8(y), 0.0f);
}

TEST(GgmlOrder, Reduce16Grouping) {
  float x[16] = {};
  x[0] = 1e8f;
  x[8] = -1e8f;  // folded together first (lanes i and i + 8)
  x[1] = 1.0f;
  EXPECT_EQ(g::reduce16(x), 1.0f);
  float y[16] = {};
  y[0] = 1e8f;
  y[1] = -1e8f;  // lanes 0 and 1 meet last
  y[4] = 1.0f;   // lane 4 joins lane 0 before that
  EXPECT_EQ(g::reduce16(y), 0.0f);
}

TEST(GgmlOrder, ExpIsAccurateAndHandlesSpecialValues) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-87.0f, 88.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = d(rng);
    const double ref = std::exp(static_cast<double>(x));
    EXPECT_NEAR(g::expf(x), ref, ref * 3e-7) << x;  // ggml documents 1.5 ulp + 0.5
  }
  EXPECT_EQ(g::expf(0.0f), 1.0f);
  EXPECT_EQ(g::expf(-std::numeric_limits<float>::infinity()), 0.0f);
  EXPECT_EQ(g::expf(-200.0f), 0.0f);
  EXPECT_EQ(g::expf(200.0f), std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(g::expf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_GT(g::expf(-100.0f), 0.0f);  // subnormal results are kept
}

TEST(GgmlOrder, Silu) {
  for (float x : {-20.0f, -3.0f, -0.5f, 0.0f, 0.5f, 3.0f, 20.0f}) {
    EXPECT_NEAR(g::silu(x), x / (1.0 + std::exp(-static_cast<double>(x))), 1e-6 * (1 + std::abs(x))) << x;
  }
}

}  // namespace
}  // namespace wisp
