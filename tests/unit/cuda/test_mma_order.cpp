// The tensor-core prefill matmul's arithmetic (src/cuda/matmul_mma.cu, cuda/mma_math.h) emulated on
// the host against an emulation of the decode kernel's (src/cuda/matmul.cu), so a reordering
// mistake in either fails here, without a GPU:
//   - the int8 codes and bias the mma kernel feeds the tensor cores give every chunk half the same
//     exact integer dot as block_math.h's chunk_isums, on random and adversarial blocks of every
//     quantized type (WQ zero-points up to 255 and 8-bit codes included);
//   - the mma kernel's float order (per decode lane, its chunks in turn; the lane sums through
//     SlotTreeSum in slot order) gives the decode kernel's bits (lane sums, then the xor-shuffle
//     tree) for every (row, token), at row lengths below, at and above one chunk per lane;
//   - the comparison is sharp: feeding the lanes in their natural order instead changes some bits.
// The decode emulation here restates matmul.cu's loops (lane l adds chunks l, l + 32, ... starting
// from 0; __shfl_xor_sync with offsets 16, 8, 4, 2, 1; lane 0's value is written); the device test
// (tests/unit/cuda_device) checks that emulation against the device itself.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "block_cases.h"
#include "cuda/block_math.h"
#include "cuda/mma_math.h"

namespace wisp::cuda {
namespace {
using namespace test;

// matmul.cu's order for one (row, token): per-lane sums, then the xor-shuffle tree.
float decode_kernel_order(const std::vector<float>& chunk_dots) {
  float lane[kLanes] = {};
  for (std::size_t c = 0; c < chunk_dots.size(); ++c) lane[c % kLanes] = hd_add(lane[c % kLanes], chunk_dots[c]);
  for (int off = kLanes / 2; off > 0; off /= 2) {
    float next[kLanes];
    for (int l = 0; l < kLanes; ++l) next[l] = hd_add(lane[l], lane[l ^ off]);
    std::memcpy(lane, next, sizeof lane);
  }
  return lane[0];
}

// matmul_mma.cu's order for one (row, token), with the lanes taken in `lane_of(slot)` order.
template <class LaneOf>
float mma_kernel_order(const std::vector<float>& chunk_dots, LaneOf lane_of) {
  SlotTreeSum tree{};
  const auto n = static_cast<std::int64_t>(chunk_dots.size());
  for (int slot = 0; slot < kLanes; ++slot) {
    float part = 0.0f;
    for (std::int64_t c = lane_of(slot); c < n; c += kLanes)
      part = hd_add(part, chunk_dots[static_cast<std::size_t>(c)]);
    tree.add(slot, part);
  }
  return tree.total;
}

bool same_bits(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;  // NaN payloads are not part of the contract
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// The cases of block_cases.h, plus WQ rows whose zero-points range over the whole byte (outside
// [0, 2^b - 1], what a damaged or foreign file may hold): q = code - z then leaves int8.
std::vector<std::uint8_t> row_for(const TypeCase& c, std::int64_t n_cols, bool wide_zero, std::mt19937& rng) {
  std::vector<std::uint8_t> row = random_row(c, n_cols / c.block_elems, rng);
  if (wide_zero && c.wq_zero_offset >= 0) {
    for (std::size_t b = 0; b < row.size(); b += c.block_bytes) {
      row[b + static_cast<std::size_t>(c.wq_zero_offset)] = static_cast<std::uint8_t>(rng());
    }
  }
  return row;
}

TEST(CudaMmaOrder, Int8CodesAndBiasGiveTheDecodeKernelsIntegerDots) {
  std::mt19937 rng(21);
  const std::int64_t n = 512;
  int biased = 0;
  for (const TypeCase& c : all_cases()) {
    for (bool wide_zero : {false, true}) {
      for (int trial = 0; trial < 8; ++trial) {
        const std::vector<std::uint8_t> row = row_for(c, n, wide_zero, rng);
        const std::vector<float> x = random_activations(rng, n);
        for (std::int64_t ch = 0; ch < n / kChunk; ++ch) {
          WeightChunk w{};
          ASSERT_TRUE(decode_chunk(c.id, row.data(), ch, w)) << c.name;
          MmaCodes m{};
          mma_codes(w, m);
          for (int j = 0; j < kChunk; ++j)
            ASSERT_EQ(m.q[j] + m.bias, w.q[j]) << c.name << " chunk " << ch << " code " << j;
          if (m.bias != 0) ++biased;
          ActChunk a{};
          quantize_act_chunk(x.data() + ch * kChunk, a);
          std::int32_t want[2];
          chunk_isums(w, a, want);
          for (int h = 0; h < 2; ++h) {
            EXPECT_EQ(biased_isum(code_dot_half(m, a, h), m.bias, a.sum[h]), want[h])
                << c.name << " chunk " << ch << " half " << h;
          }
        }
      }
    }
  }
  EXPECT_GT(biased, 0) << "no chunk needed a bias: the adversarial WQ rows did not reach it";
}

TEST(CudaMmaOrder, MmaKernelOrderEqualsTheDecodeKernelsBitForBit) {
  std::mt19937 rng(23);
  const std::int64_t n_rows = 5, n_tok = 7;
  int compared = 0;
  // 8 chunks (fewer than the lanes), 32 (one per lane), 72 (uneven, more than two per lane).
  for (std::int64_t n_cols : {256, 1024, 2304}) {
    const std::int64_t n_chunks = n_cols / kChunk;
    std::vector<ActChunk> act(static_cast<std::size_t>(n_tok * n_chunks));
    for (std::int64_t t = 0; t < n_tok; ++t) {
      // Token 0 carries the adversarial activation blocks; the others are plain normal values.
      std::vector<float> x = random_activations(rng, n_cols);
      if (t > 0) {
        std::normal_distribution<float> g(0.0f, 1.0f);
        for (auto& v : x) v = g(rng);
      }
      for (std::int64_t ch = 0; ch < n_chunks; ++ch) quantize_act_chunk(x.data() + ch * kChunk, act[t * n_chunks + ch]);
    }
    for (const TypeCase& c : all_cases()) {
      for (std::int64_t r = 0; r < n_rows; ++r) {
        const std::vector<std::uint8_t> row = row_for(c, n_cols, r % 2 == 1, rng);
        std::vector<WeightChunk> w(static_cast<std::size_t>(n_chunks));
        std::vector<MmaCodes> m(static_cast<std::size_t>(n_chunks));
        for (std::int64_t ch = 0; ch < n_chunks; ++ch) {
          ASSERT_TRUE(decode_chunk(c.id, row.data(), ch, w[ch]));
          mma_codes(w[ch], m[ch]);
        }
        for (std::int64_t t = 0; t < n_tok; ++t) {
          std::vector<float> decode_dots, mma_dots;
          for (std::int64_t ch = 0; ch < n_chunks; ++ch) {
            const ActChunk& a = act[t * n_chunks + ch];
            decode_dots.push_back(chunk_dot(w[ch], a));
            const std::int32_t isum[2] = {biased_isum(code_dot_half(m[ch], a, 0), m[ch].bias, a.sum[0]),
                                          biased_isum(code_dot_half(m[ch], a, 1), m[ch].bias, a.sum[1])};
            mma_dots.push_back(chunk_dot_isums(w[ch], a.d, a.sum, isum));
          }
          const float want = decode_kernel_order(decode_dots);
          const float got = mma_kernel_order(mma_dots, slot_lane);
          ASSERT_TRUE(same_bits(got, want))
              << c.name << " n_cols " << n_cols << " row " << r << " token " << t << ": " << got << " vs " << want;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 0);
}

TEST(CudaMmaOrder, TheComparisonSeesALaneOrderMistake) {
  // Values of mixed magnitude, so the grouping of the additions shows in the bits.
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  int differ = 0;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<float> dots(72);
    for (auto& v : dots) v = u(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 24));
    const float want = decode_kernel_order(dots);
    ASSERT_TRUE(same_bits(mma_kernel_order(dots, slot_lane), want));
    if (!same_bits(mma_kernel_order(dots, [](int slot) { return slot; }), want)) ++differ;
  }
  EXPECT_GT(differ, 0) << "natural lane order never changed a bit: the order test could not fail";
}

}  // namespace
}  // namespace wisp::cuda
