// Test inputs for the CUDA backend's per-block math, shared by the host suites of tests/unit/cuda/:
// every quantized block type the backend runs, with where its half-float fields are, random and
// adversarial rows of blocks, and random and adversarial activations.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "cuda/block_math.h"
#include "formats/half.h"
#include "formats/wq_format.h"

namespace wisp::cuda::test {

struct TypeCase {
  std::uint32_t id;
  std::string name;
  std::size_t block_bytes;
  int block_elems;
  std::vector<int> half_offsets;  // byte offsets of the half-float fields of a block
  int wq_zero_offset = -1;        // WQ: the zero-point byte, kept inside [0, 2^b - 1]
  int wq_bits = 0;
};

inline std::vector<TypeCase> all_cases() {
  std::vector<TypeCase> cases = {
      {type_id::kQ4_0, "Q4_0", 18, 32, {0}},      {type_id::kQ4_1, "Q4_1", 20, 32, {0, 2}},
      {type_id::kQ5_0, "Q5_0", 22, 32, {0}},      {type_id::kQ5_1, "Q5_1", 24, 32, {0, 2}},
      {type_id::kQ8_0, "Q8_0", 34, 32, {0}},      {type_id::kQ2_K, "Q2_K", 84, 256, {80, 82}},
      {type_id::kQ3_K, "Q3_K", 110, 256, {108}},  {type_id::kQ4_K, "Q4_K", 144, 256, {0, 2}},
      {type_id::kQ5_K, "Q5_K", 176, 256, {0, 2}}, {type_id::kQ6_K, "Q6_K", 210, 256, {208}},
  };
  for (int bits : kWqBits) {
    for (int g : kWqGroups) {
      TypeCase c{wq_type_id(bits, g), wq_type_name(bits, g), wq_block_bytes(bits, g), g, {0}, 2, bits};
      cases.push_back(c);
    }
  }
  return cases;
}

// A half with a random exponent in a sane range (and sometimes zero, negative, subnormal or the
// largest finite value: the adversarial cases).
inline std::uint16_t random_half(std::mt19937& rng) {
  const int kind = static_cast<int>(rng() % 16);
  if (kind == 0) return 0;                                          // zero scale
  if (kind == 1) return static_cast<std::uint16_t>(rng() % 0x400);  // subnormal
  if (kind == 2) return 0x7bff;                                     // 65504
  if (kind == 3) return 0x8000;                                     // -0
  const float v = std::ldexp(std::uniform_real_distribution<float>(0.5f, 1.0f)(rng), -static_cast<int>(rng() % 12)) *
                  ((rng() & 1) ? -1.0f : 1.0f);
  return f32_to_f16(v);
}

inline std::vector<std::uint8_t> random_row(const TypeCase& c, std::int64_t n_blocks, std::mt19937& rng) {
  std::vector<std::uint8_t> row(c.block_bytes * static_cast<std::size_t>(n_blocks));
  for (auto& b : row) b = static_cast<std::uint8_t>(rng());
  for (std::int64_t b = 0; b < n_blocks; ++b) {
    std::uint8_t* blk = row.data() + b * static_cast<std::int64_t>(c.block_bytes);
    for (int off : c.half_offsets) {
      const std::uint16_t h = random_half(rng);
      blk[off] = static_cast<std::uint8_t>(h & 0xff);
      blk[off + 1] = static_cast<std::uint8_t>(h >> 8);
    }
    if (c.wq_zero_offset >= 0) {
      blk[c.wq_zero_offset] = static_cast<std::uint8_t>(rng() % (1u << c.wq_bits));
      blk[c.wq_zero_offset + 1] = 0;
    }
  }
  return row;
}

inline std::vector<float> random_activations(std::mt19937& rng, std::int64_t n) {
  std::vector<float> x(static_cast<std::size_t>(n));
  std::normal_distribution<float> g(0.0f, 1.0f);
  for (auto& v : x) v = g(rng);
  // Adversarial blocks: all zero, one huge value, exact ties at half a code step.
  for (int j = 0; j < kChunk; ++j) x[static_cast<std::size_t>(j)] = 0.0f;
  x[kChunk] = 1e30f;
  for (int j = 0; j < kChunk; ++j)
    x[static_cast<std::size_t>(2 * kChunk + j)] = (j % 2 ? 0.5f : 1.5f) * (127.0f / 127.0f);
  x[2 * kChunk] = 127.0f;
  return x;
}

}  // namespace wisp::cuda::test
