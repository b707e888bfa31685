// The CUDA backend's per-block math (src/cuda/block_math.h), compiled for the host, against the CPU
// references: the decoded values equal the reference dequantizers' bit for bit on random and
// adversarial blocks of every type the backend runs, the activation quantizer writes the CPU's
// Q8_0 activation codes and scales, and the chunk dot is within a normalized bound of the exact
// dot of the same quantized values.
#include "cuda/block_math.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "block_cases.h"
#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "formats/wq_format.h"
#include "kernels/act_quant.h"

namespace wisp::cuda {
namespace {
using namespace test;

TEST(CudaBlockMath, DecodedValuesEqualTheReferenceDequantizerBitForBit) {
  std::mt19937 rng(7);
  for (const TypeCase& c : all_cases()) {
    const BlockTypeInfo* info = find_block_type(c.id);
    ASSERT_NE(info, nullptr) << c.name;
    const std::int64_t n = 512;  // two K super-blocks, several groups of every WQ type
    for (int trial = 0; trial < 20; ++trial) {
      const std::vector<std::uint8_t> row = random_row(c, n / c.block_elems, rng);
      std::vector<float> ref(n);
      info->dequantize(row.data(), ref.data(), n);
      for (std::int64_t ch = 0; ch < n / kChunk; ++ch) {
        WeightChunk w{};
        ASSERT_TRUE(decode_chunk(c.id, row.data(), ch, w)) << c.name;
        for (int j = 0; j < kChunk; ++j) {
          const float got = chunk_value(w, j);
          const float want = ref[static_cast<std::size_t>(ch * kChunk + j)];
          std::uint32_t gb, wb;
          std::memcpy(&gb, &got, 4);
          std::memcpy(&wb, &want, 4);
          ASSERT_EQ(gb, wb) << c.name << " chunk " << ch << " value " << j << ": " << got << " vs " << want;
        }
      }
    }
  }
}

TEST(CudaBlockMath, FloatChunksEqualTheReference) {
  std::mt19937 rng(11);
  for (std::uint32_t id : {type_id::kF32, type_id::kF16, type_id::kBF16}) {
    const BlockTypeInfo* info = find_block_type(id);
    ASSERT_NE(info, nullptr);
    const std::int64_t n = 128;
    std::vector<std::uint8_t> row(info->block_bytes * n);
    for (auto& b : row) b = static_cast<std::uint8_t>(rng());
    std::vector<float> ref(n);
    info->dequantize(row.data(), ref.data(), n);
    for (std::int64_t ch = 0; ch < n / kChunk; ++ch) {
      float out[kChunk];
      float_chunk(id, row.data(), ch, out);
      ASSERT_EQ(std::memcmp(out, ref.data() + ch * kChunk, sizeof out), 0) << info->name << " chunk " << ch;
    }
  }
}

TEST(CudaBlockMath, UnknownTypesAreRefused) {
  WeightChunk w{};
  const std::uint8_t row[64] = {};
  EXPECT_FALSE(decode_chunk(type_id::kF16, row, 0, w));
  EXPECT_FALSE(decode_chunk(999, row, 0, w));
  EXPECT_FALSE(decode_chunk(type_id::kWqBase + 70, row, 0, w));  // no 7-bit WQ type
}

TEST(CudaBlockMath, ActivationQuantizerWritesTheCpuQ8_0Codes) {
  std::mt19937 rng(3);
  const std::int64_t n = 1024;
  const std::vector<float> x = random_activations(rng, n);
  std::vector<BlockQ8_0> ref(static_cast<std::size_t>(n / 32));
  kernels::quantize_act_q8_0(x.data(), ref.data(), n);
  for (std::int64_t b = 0; b < n / kChunk; ++b) {
    ActChunk a{};
    quantize_act_chunk(x.data() + b * kChunk, a);
    const BlockQ8_0& r = ref[static_cast<std::size_t>(b)];
    EXPECT_EQ(a.d, f16_to_f32(r.d)) << "block " << b;
    EXPECT_EQ(std::memcmp(a.q, r.qs, kChunk), 0) << "block " << b;
    int s0 = 0, s1 = 0;
    for (int j = 0; j < 16; ++j) s0 += r.qs[j];
    for (int j = 16; j < 32; ++j) s1 += r.qs[j];
    EXPECT_EQ(a.sum[0], s0);
    EXPECT_EQ(a.sum[1], s1);
  }
}

TEST(CudaBlockMath, ChunkDotIsWithinTheNormalizedBoundOfTheExactDot) {
  std::mt19937 rng(5);
  double worst = 0.0;
  for (const TypeCase& c : all_cases()) {
    const std::int64_t n = 512;
    for (int trial = 0; trial < 10; ++trial) {
      const std::vector<std::uint8_t> row = random_row(c, n / c.block_elems, rng);
      const std::vector<float> x = random_activations(rng, n);
      for (std::int64_t ch = 0; ch < n / kChunk; ++ch) {
        WeightChunk w{};
        ASSERT_TRUE(decode_chunk(c.id, row.data(), ch, w));
        ActChunk a{};
        quantize_act_chunk(x.data() + ch * kChunk, a);
        // The exact dot of the decoded parts (scale * q + min, unrounded) with the activation's
        // values; the bound is relative to the sum of both parts' magnitudes.
        double exact = 0.0, mag = 0.0;
        for (int j = 0; j < kChunk; ++j) {
          const double sq = static_cast<double>(w.scale[j / 16]) * w.q[j];
          const double mn = w.has_min ? static_cast<double>(w.min[j / 16]) : 0.0;
          const double av = static_cast<double>(a.d) * a.q[j];
          exact += (sq + mn) * av;
          mag += (std::fabs(sq) + std::fabs(mn)) * std::fabs(av);
        }
        const float got = chunk_dot(w, a);
        if (!std::isfinite(exact) || mag == 0.0) {
          if (mag == 0.0) EXPECT_EQ(got, 0.0f);
          continue;
        }
        const double err = std::fabs(static_cast<double>(got) - exact) / mag;
        worst = std::max(worst, err);
        ASSERT_LE(err, 4e-7) << c.name << " chunk " << ch << ": " << got << " vs " << exact;
      }
    }
  }
  std::printf("worst normalized error of the chunk dot: %.3g\n", worst);
}

}  // namespace
}  // namespace wisp::cuda
