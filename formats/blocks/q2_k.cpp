// Q2_K: 2-bit codes in 16 sub-blocks of 16 with 4-bit scales and mins. Layout and value order:
// formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

// Each sub-block's float scale and min are formed first, then value = dl * q - ml: the same
// rounding steps as the gguf package ((d * sc) * q - (dmin * mn), each product rounded).
void dequantize_q2_k(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q2_K", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockQ2_K>(blocks, b);
    const float d = f16_to_f32(blk.d);
    const float dmin = f16_to_f32(blk.dmin);
    float* y = out + b * kQK_K;
    for (int e = 0; e < kQK_K; ++e) {
      const int c = e / 128, s = (e % 128) / 32, l = e % 32;
      const int q = (blk.qs[32 * c + l] >> (2 * s)) & 3;
      const std::uint8_t sc = blk.scales[e / 16];
      const float dl = d * static_cast<float>(sc & 0x0f);
      const float ml = dmin * static_cast<float>(sc >> 4);
      y[e] = dl * static_cast<float>(q) - ml;
    }
  }
}

}  // namespace wisp::blocks
