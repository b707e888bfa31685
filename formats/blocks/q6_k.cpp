// Q6_K: 6-bit codes (biased by 32) in 16 sub-blocks of 16 with signed 8-bit scales. Layout and
// value order: formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

// value = (d * sc) * (q - 32), the sub-block scale rounded to float32 first.
void dequantize_q6_k(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q6_K", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockQ6_K>(blocks, b);
    const float d = f16_to_f32(blk.d);
    float* y = out + b * kQK_K;
    for (int e = 0; e < kQK_K; ++e) {
      const int c = e / 128, r = e % 128;
      const int low = (blk.ql[64 * c + r % 64] >> (4 * (r / 64))) & 0x0f;
      const int high = (blk.qh[32 * c + r % 32] >> (2 * (r / 32))) & 3;
      const float dl = d * static_cast<float>(blk.scales[e / 16]);
      y[e] = dl * static_cast<float>((low | (high << 4)) - 32);
    }
  }
}

}  // namespace wisp::blocks
