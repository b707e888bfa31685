// WQ weight rows (formats/FORMAT.md blocks) for the kernel tests: random planes and zero-points
// with moderate scales, edge scales (zero, subnormal, largest half, negative), and planes of all
// 0xff with z = 0 / all 0x00 with z at the largest code (the integer dots' extremes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "formats/half.h"
#include "formats/wq_format.h"

namespace wisp::test {

inline std::vector<std::vector<std::uint8_t>> wq_weights(int bits, int group, std::int64_t n, std::mt19937& rng) {
  const std::size_t bb = wq_block_bytes(bits, group);
  const auto groups = static_cast<std::size_t>(n / group);
  std::uniform_int_distribution<int> byte(0, 255), zero(0, (1 << bits) - 1);
  std::uniform_real_distribution<float> scale(0.001f, 0.05f);
  constexpr std::uint16_t kEdge[] = {0x0000, 0x0001, 0x7bff, 0xa000, 0x3c00};
  std::vector<std::vector<std::uint8_t>> out;
  for (int kind = 0; kind < 4; ++kind) {
    std::vector<std::uint8_t> w(bb * groups);
    for (std::size_t g = 0; g < groups; ++g) {
      std::uint8_t* blk = w.data() + g * bb;
      const std::uint16_t s = kind == 1 ? kEdge[g % 5] : f32_to_f16(scale(rng));
      std::memcpy(blk, &s, 2);
      blk[2] = static_cast<std::uint8_t>(kind == 2 ? 0 : kind == 3 ? (1 << bits) - 1 : zero(rng));
      blk[3] = 0;
      for (std::size_t j = kWqHeaderBytes; j < bb; ++j) {
        blk[j] = kind == 2 ? 0xff : kind == 3 ? 0x00 : static_cast<std::uint8_t>(byte(rng));
      }
    }
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace wisp::test
