// KV row codecs (kv_quant.h): byte layouts, round trips within the seeds' error bounds, and the
// pool storing, copying (copy-on-write) and reading quantized rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "formats/half.h"
#include "kv/kv_pool.h"
#include "kv/kv_quant.h"
#include "wisp/error.h"

namespace wisp {
namespace {

std::vector<float> random_row(std::size_t n, unsigned seed, float lo = -3.0f, float hi = 3.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

std::vector<float> round_trip(KvType t, const std::vector<float>& x, std::vector<std::byte>* bytes_out = nullptr) {
  std::vector<std::byte> bytes(kv_type_info(t).bytes_for(x.size()));
  kv_encode_row(t, x.data(), static_cast<std::int64_t>(x.size()), bytes.data());
  std::vector<float> y(x.size());
  kv_decode_row(t, bytes.data(), static_cast<std::int64_t>(x.size()), y.data());
  if (bytes_out) *bytes_out = bytes;
  return y;
}

float stored_f16(const std::byte* p) {
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return f16_to_f32(h);
}

TEST(KvQuant, F16StoresTheHalfRoundedValues) {
  const auto x = random_row(64, 1);
  const auto y = round_trip(KvType::kF16, x);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_EQ(y[i], f16_to_f32(f32_to_f16(x[i])));
}

TEST(KvQuant, F32IsExact) {
  const auto x = random_row(40, 2);
  EXPECT_EQ(round_trip(KvType::kF32, x), x);
}

TEST(KvQuant, Q4ErrorIsAtMostHalfAStepPerGroup) {
  // Seeds: s = (r_max - r_min) / 15 over the group's range (widened to include 0), error <= s/2.
  for (unsigned seed = 0; seed < 50; ++seed) {
    const float lo = seed % 3 == 0 ? 0.5f : -4.0f;  // some groups entirely positive
    const auto x = random_row(128, seed, lo, 2.0f + static_cast<float>(seed % 5));
    std::vector<std::byte> bytes;
    const auto y = round_trip(KvType::kQ4, x, &bytes);
    ASSERT_EQ(bytes.size(), 4u * 20);
    for (std::size_t g = 0; g < 4; ++g) {
      const float s = stored_f16(bytes.data() + 20 * g);
      const float z = stored_f16(bytes.data() + 20 * g + 2);
      EXPECT_EQ(z, std::floor(z));  // an integer code
      EXPECT_GE(z, 0.0f);
      EXPECT_LE(z, 15.0f);
      float r_min = 0.0f, r_max = 0.0f;
      for (std::size_t j = 0; j < 32; ++j) {
        r_min = std::min(r_min, x[32 * g + j]);
        r_max = std::max(r_max, x[32 * g + j]);
      }
      // The stored scale is the f16 rounding of range / 15.
      EXPECT_NEAR(s, (r_max - r_min) / 15.0f, (r_max - r_min) / 15.0f * 1e-3f);
      for (std::size_t j = 0; j < 32; ++j) {
        const std::size_t i = 32 * g + j;
        EXPECT_LE(std::fabs(y[i] - x[i]), s / 2 * (1 + 1e-5f) + 1e-6f) << "seed " << seed << " i " << i;
      }
    }
  }
}

TEST(KvQuant, Q4SeedConventionsOnAKnownGroup) {
  // Range [-1, 2]: s = 3/15 = 0.2, z = round(1 / 0.2) = 5, 0.5 -> round(2.5) + 5 = 8 (half up).
  std::vector<float> x(32, 0.0f);
  x[0] = -1.0f;
  x[1] = 2.0f;
  x[2] = 0.5f;
  std::vector<std::byte> bytes;
  const auto y = round_trip(KvType::kQ4, x, &bytes);
  EXPECT_EQ(stored_f16(bytes.data()), f16_to_f32(f32_to_f16(0.2f)));
  EXPECT_EQ(stored_f16(bytes.data() + 2), 5.0f);
  EXPECT_EQ(static_cast<int>(bytes[4 + 2]) & 0x0f, 8);
  EXPECT_EQ(y[3], 0.0f);  // 0 is a code (z): exact
}

TEST(KvQuant, Q4ConstantGroupComesBackExactly) {
  for (float c : {0.0f, 1.5f, -0.375f}) {
    const std::vector<float> x(32, c);
    const auto y = round_trip(KvType::kQ4, x);
    for (float v : y) EXPECT_EQ(v, c);
  }
}

TEST(KvQuant, Q8_0MatchesGgmlBlockAndBound) {
  for (unsigned seed = 0; seed < 50; ++seed) {
    const auto x = random_row(64, 100 + seed, -5.0f, 3.0f);
    std::vector<std::byte> bytes;
    const auto y = round_trip(KvType::kQ8_0, x, &bytes);
    ASSERT_EQ(bytes.size(), 2u * 34);
    for (std::size_t g = 0; g < 2; ++g) {
      float amax = 0.0f;
      for (std::size_t j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[32 * g + j]));
      const float d = amax / 127.0f;
      const float dh = stored_f16(bytes.data() + 34 * g);
      EXPECT_EQ(dh, f16_to_f32(f32_to_f16(d)));
      for (std::size_t j = 0; j < 32; ++j) {
        const std::size_t i = 32 * g + j;
        const auto q = static_cast<std::int8_t>(bytes[34 * g + 2 + j]);
        EXPECT_EQ(q, static_cast<std::int8_t>(std::lround(x[i] * (1.0f / d)))) << i;  // GGML: round(x * (1/d))
        // d/2 from rounding the code, plus what storing d in half moved each of up to 127 steps.
        EXPECT_LE(std::fabs(y[i] - x[i]), d / 2 + 127 * std::fabs(dh - d) + 1e-6f) << i;
      }
    }
  }
}

TEST(KvQuant, PartialLastGroupIsPaddedAndDecodesOnlyN) {
  // head_dim 40: two groups, the second with 8 values.
  for (KvType t : {KvType::kQ8_0, KvType::kQ4}) {
    const auto x = random_row(40, 7);
    std::vector<std::byte> bytes;
    const auto y = round_trip(t, x, &bytes);
    EXPECT_EQ(bytes.size(), 2u * kv_type_info(t).group_bytes);
    for (std::size_t i = 0; i < x.size(); ++i) EXPECT_NEAR(y[i], x[i], 0.25f) << kv_type_name(t) << " " << i;
  }
}

TEST(KvQuant, ErrorGrowsAboutSeventeenfoldFromEightToFourBits) {
  // Seeds: the same range in 4 bits has steps 255/15 = 17x wider than in 8 (q8_0 is symmetric,
  // so its step is 2*amax/254 rather than range/255; the ratio of mean errors is still ~8-17x).
  double e8 = 0, e4 = 0;
  for (unsigned seed = 0; seed < 20; ++seed) {
    const auto x = random_row(256, 300 + seed);
    const auto y8 = round_trip(KvType::kQ8_0, x);
    const auto y4 = round_trip(KvType::kQ4, x);
    for (std::size_t i = 0; i < x.size(); ++i) {
      e8 += std::fabs(y8[i] - x[i]);
      e4 += std::fabs(y4[i] - x[i]);
    }
  }
  EXPECT_GT(e4 / e8, 7.0);
  EXPECT_LT(e4 / e8, 20.0);
}

KvLayout quant_layout(KvType t) {
  KvLayout l;
  l.n_layers = 2;
  l.n_kv_heads = 2;
  l.head_dim = 64;
  l.block_size = 16;
  l.type = t;
  return l;
}

std::vector<float> decoded(const KvPool& pool, SeqId seq, std::uint32_t layer, KvKind kind, std::uint32_t head,
                           std::size_t pos) {
  const KvLayout& l = pool.layout();
  const BlockId b = pool.block_table(seq)[pos / l.block_size];
  const std::byte* row = pool.plane_data(b, layer, kind, head) + (pos % l.block_size) * l.row_bytes();
  std::vector<float> out(l.head_dim);
  kv_decode_row(l.type, row, l.head_dim, out.data());
  return out;
}

TEST(KvQuantPool, WriteEncodesRowsWhereAttentionReadsThem) {
  for (KvType t : {KvType::kF16, KvType::kQ8_0, KvType::kQ4}) {
    KvPool pool(quant_layout(t), 8);
    EXPECT_EQ(pool.layout().row_bytes(), kv_type_info(t).bytes_for(64));
    const SeqId s = pool.create_sequence();
    pool.append(s, 20);
    for (std::size_t pos = 0; pos < 20; ++pos) {
      for (std::uint32_t layer = 0; layer < 2; ++layer) {
        const auto k = random_row(128, static_cast<unsigned>(pos * 10 + layer));
        const auto v = random_row(128, static_cast<unsigned>(pos * 10 + layer + 5000));
        pool.write(s, layer, pos, k, v);
        for (std::uint32_t h = 0; h < 2; ++h) {
          const std::vector<float> kh(k.begin() + h * 64, k.begin() + (h + 1) * 64);
          const std::vector<float> vh(v.begin() + h * 64, v.begin() + (h + 1) * 64);
          EXPECT_EQ(decoded(pool, s, layer, KvKind::kKey, h, pos), round_trip(t, kh));
          EXPECT_EQ(decoded(pool, s, layer, KvKind::kValue, h, pos), round_trip(t, vh));
        }
      }
    }
  }
}

TEST(KvQuantPool, ForkCopiesQuantizedTailOnWriteAndLeavesTheParentIntact) {
  for (KvType t : {KvType::kQ8_0, KvType::kQ4}) {
    KvPool pool(quant_layout(t), 8);
    const SeqId parent = pool.create_sequence();
    pool.append(parent, 20);  // a full block and 4 slots of a second
    for (std::size_t pos = 0; pos < 20; ++pos) {
      for (std::uint32_t layer = 0; layer < 2; ++layer) {
        pool.write(parent, layer, pos, random_row(128, static_cast<unsigned>(pos + 100 * layer)),
                   random_row(128, static_cast<unsigned>(pos + 100 * layer + 7)));
      }
    }
    std::vector<std::vector<float>> before;
    for (std::size_t pos = 0; pos < 20; ++pos) before.push_back(decoded(pool, parent, 1, KvKind::kValue, 1, pos));

    const SeqId child = pool.fork(parent);
    EXPECT_EQ(pool.block_table(child)[1], pool.block_table(parent)[1]);
    pool.append(child, 1);  // copy-on-write of the shared tail
    ASSERT_NE(pool.block_table(child)[1], pool.block_table(parent)[1]);
    EXPECT_EQ(pool.block_table(child)[0], pool.block_table(parent)[0]);  // the full block stays shared
    for (std::uint32_t layer = 0; layer < 2; ++layer) {
      pool.write(child, layer, 20, random_row(128, 999), random_row(128, 998));
    }
    // The child may overwrite its copied slots too; the parent must not see it.
    pool.truncate(child, 18);
    pool.append(child, 1);
    pool.write(child, 1, 18, random_row(128, 55), random_row(128, 56));
    for (std::size_t pos = 0; pos < 20; ++pos) {
      EXPECT_EQ(decoded(pool, parent, 1, KvKind::kValue, 1, pos), before[pos]) << kv_type_name(t) << " " << pos;
    }
    for (std::size_t pos = 16; pos < 18; ++pos) {
      EXPECT_EQ(decoded(pool, child, 1, KvKind::kValue, 1, pos), before[pos]) << "copied slot " << pos;
    }
    EXPECT_NE(decoded(pool, child, 1, KvKind::kValue, 1, 18), before[18]);
    pool.allocator().check_consistency();
  }
}

TEST(KvQuantPool, BytesHeldFollowTheTypeTable) {
  for (KvType t : {KvType::kF32, KvType::kF16, KvType::kQ8_0, KvType::kQ4}) {
    KvPool pool(quant_layout(t), 8);
    const SeqId s = pool.create_sequence();
    pool.append(s, 17);
    // 2 blocks * 16 slots * 2 (K, V) * 2 layers * 2 heads * row bytes.
    EXPECT_EQ(pool.bytes_held(s), 2u * 16 * 2 * 2 * 2 * kv_type_info(t).bytes_for(64)) << kv_type_name(t);
  }
  EXPECT_EQ(kv_type_info(KvType::kQ4).bytes_for(64), 40u);
  EXPECT_EQ(kv_type_info(KvType::kQ8_0).bytes_for(64), 68u);
}

TEST(KvTypes, NamesAndErrors) {
  EXPECT_EQ(kv_type_from_name("Q4"), KvType::kQ4);
  EXPECT_EQ(kv_type_name(KvType::kQ8_0), "q8_0");
  EXPECT_EQ(kv_type_names(), "f16, f32, q8_0, q4");
  try {
    kv_type_from_name("int4");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown KV type 'int4' (known: f16, f32, q8_0, q4)"), std::string::npos);
  }
}

}  // namespace
}  // namespace wisp
