// The xsimd element-wise loops against their scalar forms, bit for bit, for lengths around every
// vector width (tails included) and values that make rounding differences visible.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/vec_ops.h"

namespace wisp {
namespace {

std::vector<float> randoms(std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng) * std::exp2(static_cast<float>(static_cast<int>(rng() % 20) - 10));
  return v;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(VecOps, EqualScalarLoopsBitForBit) {
  std::mt19937 rng(3);
  for (std::size_t n = 0; n <= 70; ++n) {
    const auto x = randoms(n, rng), w = randoms(n, rng), acc0 = randoms(n, rng);
    const float s = 0.3711f, f = -1.7f;
    std::vector<float> got(n), want(n);

    kernels::vec::mul_scale_mul(x.data(), s, w.data(), got.data(), static_cast<std::int64_t>(n));
    for (std::size_t i = 0; i < n; ++i) want[i] = x[i] * s * w[i];
    ASSERT_TRUE(same_bits(got, want)) << "mul_scale_mul n=" << n;

    kernels::vec::mul_scale(x.data(), s, got.data(), static_cast<std::int64_t>(n));
    for (std::size_t i = 0; i < n; ++i) want[i] = x[i] * s;
    ASSERT_TRUE(same_bits(got, want)) << "mul_scale n=" << n;

    got = acc0;
    want = acc0;
    kernels::vec::add_to(x.data(), got.data(), static_cast<std::int64_t>(n));
    for (std::size_t i = 0; i < n; ++i) want[i] += x[i];
    ASSERT_TRUE(same_bits(got, want)) << "add_to n=" << n;

    got = acc0;
    want = acc0;
    kernels::vec::fma_scalar(x.data(), f, got.data(), static_cast<std::int64_t>(n));
    for (std::size_t i = 0; i < n; ++i) want[i] = std::fma(x[i], f, want[i]);
    ASSERT_TRUE(same_bits(got, want)) << "fma_scalar n=" << n;
  }
}

}  // namespace
}  // namespace wisp
