// wisp's group-wise types: the seeds' worked examples (C5-C8, C10) as vectors, the registry
// entries, the plane layout and round trips for every bit-width and group size.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "formats/block_types.h"
#include "formats/half.h"
#include "formats/wq_format.h"
#include "kernels/dot.h"
#include "wisp/error.h"

namespace wisp {
namespace {

TEST(WqSeeds, C5InteriorValue) {
  const WqParams p = wq_params(-0.6f, 0.9f, 4);
  EXPECT_NEAR(p.scale, 0.1f, 1e-7);
  EXPECT_EQ(p.zero, 6);
  const int q = wq_code(0.35f, p, 4);
  EXPECT_EQ(q, 10);
  EXPECT_NEAR(wq_value(q, p), 0.4f, 1e-6);
  EXPECT_NEAR(std::fabs(wq_value(q, p) - 0.35f), p.scale / 2, 1e-6);  // error = s/2
}

TEST(WqSeeds, C6BoundaryAndClip) {
  const WqParams p = wq_params(-0.6f, 0.9f, 4);
  EXPECT_EQ(wq_code(0.9f, p, 4), 15);
  EXPECT_NEAR(wq_value(15, p), 0.9f, 1e-6);
  EXPECT_EQ(wq_code(1.4f, p, 4), 15);  // saturates, never wraps
  EXPECT_NEAR(1.4f - wq_value(wq_code(1.4f, p, 4), p), 0.5f, 1e-6);
  EXPECT_EQ(wq_code(-5.0f, p, 4), 0);
  EXPECT_EQ(wq_code(1e30f, p, 4), 15);
  EXPECT_EQ(wq_code(-1e30f, p, 4), 0);
}

TEST(WqSeeds, C7ConstantGroupIsExact) {
  for (int bits : kWqBits) {
    for (float c : {0.3f, -0.3f, 0.0f, 1024.0f, -2.5f}) {
      const WqParams p = wq_params(c, c, bits);
      EXPECT_EQ(wq_value(wq_code(c, p, bits), p), c) << "bits " << bits << " c " << c;
    }
    // And through a stored block (c a half-float value, as it is in an F16 checkpoint).
    for (int group : kWqGroups) {
      const WqFormat f{bits, group};
      for (float c : {0.3f, -0.3f, 0.0f, -7.75f}) {
        const float ch = f16_to_f32(f32_to_f16(c));  // as an F16 checkpoint holds it
        std::vector<float> x(group, ch), y(group, 99.0f);
        std::vector<std::uint8_t> blk(f.block_bytes());
        wq_encode_group_minmax(x.data(), f, blk.data());
        wq_decode_group(blk.data(), f, y.data());
        for (float v : y) ASSERT_EQ(v, ch) << "bits " << bits << " group " << group;
      }
    }
  }
}

// Largest |r - r_hat| over a dense sweep of [-1, 1].
float max_error_on_unit_range(int bits) {
  const WqParams p = wq_params(-1.0f, 1.0f, bits);
  float worst = 0;
  for (int i = 0; i <= 200000; ++i) {
    const float r = -1.0f + 2.0f * static_cast<float>(i) / 200000.0f;
    worst = std::max(worst, std::fabs(r - wq_value(wq_code(r, p, bits), p)));
  }
  return worst;
}

TEST(WqSeeds, C8ErrorBoundShrinksWithBits) {
  float prev = 1e9f;
  for (int bits : {2, 3, 4, 5, 6, 8, 12, 16}) {
    const float bound = 1.0f / static_cast<float>((1 << bits) - 1);  // s/2 on [-1, 1]
    EXPECT_NEAR(wq_params(-1.0f, 1.0f, bits).scale / 2, bound, 1e-7);
    const float err = max_error_on_unit_range(bits);
    EXPECT_LE(err, bound * 1.0001f + 1e-7f) << bits;
    EXPECT_LT(err, prev);
    prev = err;
  }
  EXPECT_NEAR(1.0f / 15, 0.0667f, 1e-4);
  EXPECT_NEAR(1.0f / 255, 0.00392f, 1e-5);
}

TEST(WqSeeds, C10Int4VsInt8Is17xNot2x) {
  const double bound_ratio = (1.0 / 15) / (1.0 / 255);
  EXPECT_DOUBLE_EQ(bound_ratio, 17.0);
  const double measured = max_error_on_unit_range(4) / static_cast<double>(max_error_on_unit_range(8));
  EXPECT_NEAR(measured, 17.0, 0.2);
}

TEST(WqTypes, RegistryEntries) {
  EXPECT_EQ(all_wq_block_types().size(), 18u);
  for (int bits : kWqBits) {
    for (int group : kWqGroups) {
      const std::string name = wq_type_name(bits, group);
      const BlockTypeInfo* t = find_block_type(wq_type_id(bits, group));
      ASSERT_NE(t, nullptr) << name;
      EXPECT_EQ(t->name, name);
      EXPECT_EQ(find_block_type(std::string("wq") + name.substr(2)), t);  // case-insensitive
      EXPECT_EQ(t->block_elems, group);
      EXPECT_EQ(t->block_bytes, 4u + static_cast<std::size_t>(bits * group / 8));
      EXPECT_DOUBLE_EQ(t->bits_per_weight(), bits + 32.0 / group);
      EXPECT_GE(t->id, 1000u);  // outside GGML's range: llama.cpp refuses these files cleanly
      EXPECT_EQ(wq_format(t->id).bits, bits);
      EXPECT_EQ(wq_format(t->id).group, group);
      EXPECT_NE(kernels::find_dot_kernel(t->id), nullptr) << "the model can compute with " << name;
    }
  }
  EXPECT_EQ(wq_type_id(4, 64), 1041u);
  EXPECT_FALSE(is_wq_type(1047));
  EXPECT_FALSE(is_wq_type(1071));
  EXPECT_FALSE(is_wq_type(8));
}

TEST(WqTypes, PlaneLayoutIsAsDocumented) {
  // WQ4_G32: byte j of the 4-bit plane holds code j (low nibble) and code j + 16 (high nibble).
  std::uint8_t codes[32], planes[16];
  for (int j = 0; j < 32; ++j) codes[j] = static_cast<std::uint8_t>(j % 16);
  wq_pack_codes(codes, 4, 32, planes);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(planes[j], (j % 16) | (((j + 16) % 16) << 4));
  // WQ3_G32: a 2-bit plane (8 bytes, byte j = codes j, j+8, j+16, j+24) then a 1-bit plane (4 bytes,
  // byte j = bit 2 of codes j, j+4, ..., j+28).
  for (int j = 0; j < 32; ++j) codes[j] = static_cast<std::uint8_t>(j == 9 ? 7 : j == 3 ? 4 : 0);
  std::uint8_t p3[12];
  wq_pack_codes(codes, 3, 32, p3);
  EXPECT_EQ(p3[1], 3 << 2);      // code 9 = value j=1 of the second quarter, low bits 3
  EXPECT_EQ(p3[8 + 1], 1 << 2);  // code 9: j = 9 % 4 = 1, k = 9 / 4 = 2
  EXPECT_EQ(p3[8 + 3], 1);       // code 3 (=4): high bit, j = 3, k = 0
  EXPECT_EQ(p3[3], 0);
  for (int bits : kWqBits) {
    for (int group : kWqGroups) {
      std::mt19937 rng(bits * 1000 + group);
      std::vector<std::uint8_t> c(group), back(group), pl(bits * group / 8);
      for (auto& v : c) v = static_cast<std::uint8_t>(rng() & ((1u << bits) - 1));
      wq_pack_codes(c.data(), bits, group, pl.data());
      wq_unpack_codes(pl.data(), bits, group, back.data());
      ASSERT_EQ(c, back) << bits << "/" << group;
    }
  }
}

TEST(WqTypes, RoundTripEveryBitWidthAndGroup) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const BlockTypeInfo& t : all_wq_block_types()) {
    SCOPED_TRACE(t.name);
    const WqFormat f = wq_format(t.id);
    const std::int64_t n = 128 * 24;
    std::vector<float> x(n), y(n);
    for (std::int64_t i = 0; i < n; ++i) x[i] = normal(rng) * (i < n / 2 ? 0.02f : 3.0f);
    std::vector<std::uint8_t> q(t.row_bytes(n));
    t.quantize(x.data(), q.data(), n);
    t.dequantize(q.data(), y.data(), n);
    for (std::int64_t g = 0; g < n; g += f.group) {
      float mn = 0, mx = 0;
      for (int j = 0; j < f.group; ++j) mn = std::min(mn, x[g + j]), mx = std::max(mx, x[g + j]);
      const float s = (mx - mn) / static_cast<float>(f.max_code());
      const float bound = s * (0.5f + f.max_code() / 1024.0f) + 1e-6f;  // s/2 plus the half rounding of s
      for (int j = 0; j < f.group; ++j) ASSERT_LE(std::fabs(x[g + j] - y[g + j]), bound) << g + j;
    }
    // The dot kernel agrees with dequantize-then-dot.
    std::vector<float> a(n);
    for (auto& v : a) v = normal(rng);
    double want = 0;
    for (std::int64_t i = 0; i < n; ++i) want += static_cast<double>(y[i]) * a[i];
    const float got = kernels::find_dot_kernel(t.id)->dot(q.data(), a.data(), n);
    EXPECT_NEAR(got, want, 1e-3 * (1 + std::fabs(want)));
  }
}

TEST(WqTypes, PartialGroupsAreRejectedNamingTheType) {
  std::vector<float> x(200);
  std::vector<std::uint8_t> q(1024);
  const BlockTypeInfo* t = find_block_type("WQ4_G64");
  try {
    t->quantize(x.data(), q.data(), 96);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("WQ4_G64"), std::string::npos);
  }
  EXPECT_THROW(t->dequantize(q.data(), x.data(), 32), Error);
}

}  // namespace
}  // namespace wisp
