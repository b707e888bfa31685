// Activation conversion: scales, code ranges, rounding (half to even, as ggml's x86 code),
// Q8_1 sums, Q8_K block sums and sign convention, zero blocks.
#include "kernels/act_quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using namespace kernels;

TEST(ActQuant, Q8_0ScaleAndHalfToEvenRounding) {
  // amax = 127 makes the multiplier exactly 1, so the codes are the rounded inputs.
  std::vector<float> x(32, 0.0f);
  x[0] = 127.0f;
  x[1] = 2.5f;   // -> 2 (even), roundf would give 3
  x[2] = 3.5f;   // -> 4
  x[3] = -2.5f;  // -> -2
  x[4] = -0.4f;  // -> 0
  x[5] = -127.0f;
  BlockQ8_0 b{};
  quantize_act_q8_0(x.data(), &b, 32);
  EXPECT_EQ(f16_to_f32(b.d), 1.0f);
  EXPECT_EQ(b.qs[0], 127);
  EXPECT_EQ(b.qs[1], 2);
  EXPECT_EQ(b.qs[2], 4);
  EXPECT_EQ(b.qs[3], -2);
  EXPECT_EQ(b.qs[4], 0);
  EXPECT_EQ(b.qs[5], -127);
}

TEST(ActQuant, Q8_1SumUsesFloatScale) {
  std::mt19937 rng(1);
  std::normal_distribution<float> n(0.0f, 3.0f);
  std::vector<float> x(64);
  for (auto& v : x) v = n(rng);
  BlockQ8_1 b[2];
  quantize_act_q8_1(x.data(), b, 64);
  for (int k = 0; k < 2; ++k) {
    float amax = 0.0f;
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
      amax = std::max(amax, std::fabs(x[32 * k + j]));
      sum += b[k].qs[j];
      EXPECT_LE(std::abs(b[k].qs[j] * (amax > 0 ? 1 : 1)), 127);
    }
    const float d = amax / 127.0f;
    EXPECT_EQ(b[k].d, f32_to_f16(d));
    EXPECT_EQ(b[k].s, f32_to_f16(d * static_cast<float>(sum)));
    for (int j = 0; j < 32; ++j) EXPECT_NEAR(f16_to_f32(b[k].d) * b[k].qs[j], x[32 * k + j], 0.51f * d + 1e-3f * amax);
  }
}

TEST(ActQuant, Q8_KSignConventionAndBlockSums) {
  std::mt19937 rng(2);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> x(512);
  for (auto& v : x) v = n(rng);
  x[10] = 9.0f;    // block 0's largest magnitude is positive
  x[300] = -7.0f;  // block 1's is negative
  BlockQ8_K b[2];
  quantize_act_q8_K(x.data(), b, 512);
  EXPECT_EQ(b[0].qs[10], -127);  // max maps to -127 (iscale = -127 / max)
  EXPECT_EQ(b[1].qs[300 - 256], -127);
  EXPECT_LT(b[0].d, 0.0f);
  EXPECT_GT(b[1].d, 0.0f);
  for (int k = 0; k < 2; ++k) {
    for (int g = 0; g < 16; ++g) {
      int s = 0;
      for (int j = 0; j < 16; ++j) s += b[k].qs[16 * g + j];
      EXPECT_EQ(b[k].bsums[g], s);
    }
    for (int j = 0; j < 256; ++j) EXPECT_NEAR(b[k].d * b[k].qs[j], x[256 * k + j], std::fabs(b[k].d) * 0.5001f);
  }
}

TEST(ActQuant, Q8_KTieRuleOfTheInterleavingQuantizer) {
  std::vector<float> x(256, 0.5f);
  x[3] = -4.0f;  // the first of two largest magnitudes is negative
  x[9] = 4.0f;
  BlockQ8_K row{}, grouped{};
  quantize_act_q8_K(x.data(), &row, 256);
  quantize_act_q8_Kx4(x.data(), &grouped, 256);
  EXPECT_EQ(row.qs[3], -127);  // the row quantizer scales the first (-4) to -127
  EXPECT_EQ(row.qs[9], 127);
  EXPECT_EQ(grouped.qs[9], -127);  // the interleaving one scales the positive one to -127
  EXPECT_EQ(grouped.qs[3], 127);
  EXPECT_EQ(row.d, -grouped.d);
  x[9] = 3.0f;  // no tie: both agree
  quantize_act_q8_K(x.data(), &row, 256);
  quantize_act_q8_Kx4(x.data(), &grouped, 256);
  EXPECT_EQ(0, std::memcmp(&row, &grouped, sizeof row));
}

TEST(ActQuant, ZeroBlocksGiveZeroCodes) {
  std::vector<float> x(256, 0.0f);
  BlockQ8_K k{};
  quantize_act_q8_K(x.data(), &k, 256);
  EXPECT_EQ(k.d, 0.0f);
  for (int j = 0; j < 256; ++j) EXPECT_EQ(k.qs[j], 0);
  BlockQ8_0 q{};
  quantize_act_q8_0(x.data(), &q, 32);
  EXPECT_EQ(q.d, 0);
  for (int j = 0; j < 32; ++j) EXPECT_EQ(q.qs[j], 0);
}

TEST(ActQuant, RowBytesAndRaggedRows) {
  EXPECT_EQ(act_row_bytes(ActFormat::kQ8_0, 64), 2 * sizeof(BlockQ8_0));
  EXPECT_EQ(act_row_bytes(ActFormat::kQ8_K, 512), 2 * sizeof(BlockQ8_K));
  EXPECT_EQ(act_row_bytes(ActFormat::kF16, 10), 20u);
  std::vector<float> x(40);
  std::vector<std::uint8_t> out(1024);
  EXPECT_THROW(quantize_act_q8_0(x.data(), out.data(), 40), Error);
}

}  // namespace
}  // namespace wisp
