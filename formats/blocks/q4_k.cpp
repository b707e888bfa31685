// Q4_K: 4-bit codes in 8 sub-blocks of 32 with 6-bit scales and mins. Layout and value order:
// formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/k_common.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

// value = (d * sc) * q - (dmin * mn), each product rounded to float32 (the gguf package's order).
void dequantize_q4_k(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q4_K", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockQ4_K>(blocks, b);
    const float d = f16_to_f32(blk.d);
    const float dmin = f16_to_f32(blk.dmin);
    const KScaleMin sm = unpack_k_scales(blk.scales);
    float* y = out + b * kQK_K;
    for (int sub = 0; sub < 8; ++sub) {
      const float dl = d * static_cast<float>(sm.scale[sub]);
      const float ml = dmin * static_cast<float>(sm.min[sub]);
      // Sub-blocks 2c and 2c + 1 are the low and high nibbles of the same 32 bytes.
      const std::uint8_t* qs = blk.qs + 32 * (sub / 2);
      const int shift = 4 * (sub % 2);
      for (int l = 0; l < 32; ++l) y[32 * sub + l] = dl * static_cast<float>((qs[l] >> shift) & 0x0f) - ml;
    }
  }
}

}  // namespace wisp::blocks
