// Random weight rows of any block type for the kernel tests: random code bytes with the half
// scale fields overwritten by moderate values (random bytes there would give infinities and NaNs).
#pragma once

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"

namespace wisp::test {

// Offsets of the half-float scale fields inside one block of `type`.
inline std::vector<std::size_t> half_fields(GgmlType type) {
  switch (type) {
    case GgmlType::kQ4_0: return {offsetof(BlockQ4_0, d)};
    case GgmlType::kQ4_1: return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case GgmlType::kQ5_0: return {offsetof(BlockQ5_0, d)};
    case GgmlType::kQ5_1: return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case GgmlType::kQ8_0: return {offsetof(BlockQ8_0, d)};
    case GgmlType::kQ2_K: return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case GgmlType::kQ3_K: return {offsetof(BlockQ3_K, d)};
    case GgmlType::kQ4_K: return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case GgmlType::kQ5_K: return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case GgmlType::kQ6_K: return {offsetof(BlockQ6_K, d)};
    default: return {};
  }
}

// n_rows rows of n_cols values of `type`, row-major.
inline std::vector<std::uint8_t> random_matrix(GgmlType type, std::int64_t n_rows, std::int64_t n_cols, std::mt19937& rng) {
  const BlockTypeInfo& info = block_type(type);
  const std::size_t row_bytes = info.row_bytes(n_cols);
  std::vector<std::uint8_t> out(row_bytes * static_cast<std::size_t>(n_rows));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  switch (type) {
    case GgmlType::kF32: {
      auto* f = reinterpret_cast<float*>(out.data());
      for (std::size_t i = 0; i < out.size() / 4; ++i) f[i] = normal(rng);
      return out;
    }
    case GgmlType::kF16:
    case GgmlType::kBF16: {
      auto* h = reinterpret_cast<std::uint16_t*>(out.data());
      for (std::size_t i = 0; i < out.size() / 2; ++i) {
        h[i] = type == GgmlType::kF16 ? f32_to_f16(normal(rng)) : f32_to_bf16(normal(rng));
      }
      return out;
    }
    default: break;
  }
  for (auto& b : out) b = static_cast<std::uint8_t>(byte(rng));
  const auto fields = half_fields(type);
  for (std::size_t blk = 0; blk < out.size() / info.block_bytes; ++blk) {
    for (std::size_t off : fields) {
      const std::uint16_t h = f32_to_f16(scale(rng));
      std::uint8_t* p = out.data() + blk * info.block_bytes + off;
      p[0] = static_cast<std::uint8_t>(h & 0xff);
      p[1] = static_cast<std::uint8_t>(h >> 8);
    }
  }
  return out;
}

}  // namespace wisp::test
