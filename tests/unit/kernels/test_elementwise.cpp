// RMSNorm, rope (normal and neox), softmax and the FFN activations against straightforward
// references in double.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "formats/half.h"
#include "kernels/activations.h"
#include "kernels/norm.h"
#include "kernels/rope.h"

namespace wisp {
namespace {

std::vector<float> randn(std::size_t n, unsigned seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(RmsNorm, MatchesReference) {
  const auto x = randn(576, 1, 3.0f);
  const auto w = randn(576, 2);
  std::vector<float> y(576);
  kernels::rmsnorm(x.data(), w.data(), y.data(), 576, 1e-5f);
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double scale = 1.0 / std::sqrt(ss / 576 + 1e-5);
  for (int i = 0; i < 576; ++i) EXPECT_NEAR(y[i], x[i] * scale * w[i], 1e-5 * std::abs(x[i] * scale * w[i]) + 1e-6);
  // In place and without weight.
  std::vector<float> z = x;
  kernels::rmsnorm(z.data(), nullptr, z.data(), 576, 1e-5f);
  for (int i = 0; i < 576; ++i) EXPECT_NEAR(z[i], x[i] * scale, 1e-5);
}

double ref_angle(std::int64_t pos, int i, int n_dims, double base) { return pos * std::pow(base, -2.0 * i / n_dims); }

TEST(Rope, NormalPairsNeighbours) {
  kernels::RopeParams p;
  p.n_dims = 64;
  p.freq_base = 100000.0f;
  p.style = kernels::RopeStyle::kNormal;
  const int head_dim = 64, heads = 3;
  for (std::int64_t pos : {0, 1, 17, 255, 4000}) {
    auto x = randn(head_dim * heads, 3);
    const auto orig = x;
    kernels::rope(p, pos, x.data(), heads, head_dim);
    for (int h = 0; h < heads; ++h) {
      for (int i = 0; i < 32; ++i) {
        const double a = ref_angle(pos, i, 64, 100000.0);
        const double x0 = orig[h * 64 + 2 * i], x1 = orig[h * 64 + 2 * i + 1];
        // Float angles drift by a few ulps of pos*freq: allow for it at large positions.
        const double tol = 2e-6 * (1 + std::abs(a)) * (std::abs(x0) + std::abs(x1)) + 1e-6;
        EXPECT_NEAR(x[h * 64 + 2 * i], x0 * std::cos(a) - x1 * std::sin(a), tol) << pos << " " << i;
        EXPECT_NEAR(x[h * 64 + 2 * i + 1], x0 * std::sin(a) + x1 * std::cos(a), tol);
      }
    }
  }
}

TEST(Rope, NeoxPairsHalvesAndPassesUnrotatedTail) {
  kernels::RopeParams p;
  p.n_dims = 16;  // rotate only the first 16 of 24 values
  p.freq_base = 10000.0f;
  p.style = kernels::RopeStyle::kNeox;
  const int head_dim = 24;
  auto x = randn(head_dim * 2, 4);
  const auto orig = x;
  kernels::rope(p, 7, x.data(), 2, head_dim);
  for (int h = 0; h < 2; ++h) {
    const float* o = orig.data() + h * head_dim;
    const float* r = x.data() + h * head_dim;
    for (int i = 0; i < 8; ++i) {
      const double a = ref_angle(7, i, 16, 10000.0);
      EXPECT_NEAR(r[i], o[i] * std::cos(a) - o[i + 8] * std::sin(a), 1e-5);
      EXPECT_NEAR(r[i + 8], o[i] * std::sin(a) + o[i + 8] * std::cos(a), 1e-5);
    }
    for (int i = 16; i < 24; ++i) EXPECT_EQ(r[i], o[i]);
  }
}

TEST(Rope, LinearScalingAndFrequencyFactors) {
  kernels::RopeParams p;
  p.n_dims = 8;
  p.freq_base = 10000.0f;
  p.freq_scale = 0.25f;
  const float factors[4] = {1.0f, 2.0f, 4.0f, 8.0f};
  p.freq_factors = factors;
  std::vector<float> table;
  kernels::rope_table(p, 100, table);
  for (int i = 0; i < 4; ++i) {
    const double a = 0.25 * ref_angle(100, i, 8, 10000.0) / factors[i];
    EXPECT_NEAR(table[2 * i], std::cos(a), 1e-5);
    EXPECT_NEAR(table[2 * i + 1], std::sin(a), 1e-5);
  }
}

TEST(Softmax, MatchesReferenceAndHandlesMaskedEntries) {
  auto x = randn(37, 5, 4.0f);
  x[3] = -INFINITY;
  const auto orig = x;
  kernels::softmax(x.data(), 37);
  double m = -INFINITY, s = 0;
  for (float v : orig) m = std::max<double>(m, v);
  for (float v : orig) s += std::exp(v - m);
  double total = 0;
  for (int i = 0; i < 37; ++i) {
    EXPECT_NEAR(x[i], std::exp(orig[i] - m) / s, 1e-6);
    total += x[i];
  }
  EXPECT_EQ(x[3], 0.0f);
  EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(Activations, SiluMul) {
  const auto g = randn(100, 6, 3.0f);
  const auto u = randn(100, 7);
  std::vector<float> out(100);
  kernels::silu_mul(g.data(), u.data(), out.data(), 100);
  for (int i = 0; i < 100; ++i) EXPECT_NEAR(out[i], g[i] / (1 + std::exp(-double(g[i]))) * u[i], 1e-5);
}

TEST(Activations, GeluTanhMulUsesHalfPrecisionTableSemantics) {
  auto g = randn(200, 8, 4.0f);
  g[0] = -12.0f;
  g[1] = 11.0f;
  const auto u = randn(200, 9);
  std::vector<float> out(200);
  kernels::gelu_tanh_mul(g.data(), u.data(), out.data(), 200);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 11.0f * u[1]);
  for (int i = 2; i < 200; ++i) {
    if (std::abs(g[i]) >= 10.0f) continue;  // outside the table: 0 or identity, checked above
    const double x = g[i];
    const double exact = 0.5 * x * (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    // Half-precision input and output: within ~2 half ulps of the exact value.
    EXPECT_NEAR(out[i], exact * u[i], (std::abs(exact) * 2e-3 + 2e-3) * std::abs(u[i]) + 1e-6) << g[i];
    // And exactly the table value: gelu of the rounded input, rounded.
    const float h = f16_to_f32(f32_to_f16(g[i]));
    EXPECT_EQ(out[i], f16_to_f32(f32_to_f16(kernels::gelu_tanh(h))) * u[i]);
  }
}

TEST(Activations, Softcap) {
  std::vector<float> x = {0.0f, 10.0f, -100.0f, 1000.0f};
  kernels::softcap(x.data(), 4, 30.0f);
  EXPECT_EQ(x[0], 0.0f);
  EXPECT_NEAR(x[1], 30 * std::tanh(10.0 / 30), 1e-5);
  EXPECT_NEAR(x[2], 30 * std::tanh(-100.0 / 30), 1e-4);
  EXPECT_NEAR(x[3], 30.0f, 1e-4);
}

}  // namespace
}  // namespace wisp
