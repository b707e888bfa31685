// TQ1_0 and TQ2_0: ternary weights {-1, 0, 1} times one half scale per 256 values. Layouts:
// formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

namespace {

// Trit p of a TQ1_0 byte: the byte is a base-3 fraction of 256, so multiplying by 3^p (mod 256)
// shifts trit p to the top and (x * 3) >> 8 reads it.
inline int tq1_trit(std::uint8_t byte, int p) {
  static constexpr std::uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const auto shifted = static_cast<std::uint8_t>(byte * kPow3[p]);
  return ((shifted * 3) >> 8) - 1;
}

}  // namespace

void dequantize_tq1_0(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("TQ1_0", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockTQ1_0>(blocks, b);
    const float d = f16_to_f32(blk.d);
    float* y = out + b * kQK_K;
    for (int p = 0; p < 5; ++p) {
      for (int j = 0; j < 32; ++j) y[32 * p + j] = d * static_cast<float>(tq1_trit(blk.qs[j], p));
      for (int j = 0; j < 16; ++j) y[160 + 16 * p + j] = d * static_cast<float>(tq1_trit(blk.qs[32 + j], p));
    }
    for (int p = 0; p < 4; ++p) {
      for (int j = 0; j < 4; ++j) y[240 + 4 * p + j] = d * static_cast<float>(tq1_trit(blk.qh[j], p));
    }
  }
}

void dequantize_tq2_0(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("TQ2_0", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockTQ2_0>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int c = 0; c < 2; ++c) {
      for (int s = 0; s < 4; ++s) {
        for (int j = 0; j < 32; ++j) {
          const int q = (blk.qs[32 * c + j] >> (2 * s)) & 3;
          out[b * kQK_K + 128 * c + 32 * s + j] = d * static_cast<float>(q - 1);
        }
      }
    }
  }
}

}  // namespace wisp::blocks
