// Q3_K: 3-bit codes in 16 sub-blocks of 16 with signed 6-bit scales. Layout and value order:
// formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

namespace {

// The 6-bit scale of sub-block k, unbiased to [-32, 31].
int q3_k_scale(const std::uint8_t* scales, int k) {
  const int lo = k < 8 ? (scales[k] & 0x0f) : (scales[k - 8] >> 4);
  const int hi = (scales[8 + k % 4] >> (2 * (k / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}

}  // namespace

// value = (d * sc) * q, the sub-block scale rounded to float32 first as the gguf package does.
void dequantize_q3_k(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q3_K", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockQ3_K>(blocks, b);
    const float d = f16_to_f32(blk.d);
    float* y = out + b * kQK_K;
    for (int e = 0; e < kQK_K; ++e) {
      const int c = e / 128, s = (e % 128) / 32, l = e % 32;
      const int low = (blk.qs[32 * c + l] >> (2 * s)) & 3;
      const int high_set = (blk.hmask[l] >> (e / 32)) & 1;
      const int q = low - (high_set ? 0 : 4);  // a clear high bit means "subtract 4"
      const float dl = d * static_cast<float>(q3_k_scale(blk.scales, e / 16));
      y[e] = dl * static_cast<float>(q);
    }
  }
}

}  // namespace wisp::blocks
