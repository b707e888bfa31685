// Q5_0: symmetric 5-bit, value = d * (q - 16). Layout: formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/legacy_common.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

void dequantize_q5_0(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q5_0", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const auto blk = load_block<BlockQ5_0>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int j = 0; j < kQK; ++j) {
      const int q = nibble(blk.qs, j) | (high_bit(blk.qh, j) << 4);
      out[b * kQK + j] = d * static_cast<float>(q - 16);
    }
  }
}

// As Q4_0 with 32 levels: d = max / -16, codes trunc(x / d + 16.5) saturated at 31.
void quantize_q5_0(const float* in, void* blocks, std::int64_t n) {
  require_whole_blocks("Q5_0", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const float* x = in + b * kQK;
    const float d = signed_absmax(x) / -16.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    std::uint8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = truncate_code(x[j] * id + 16.5f, 31);
    BlockQ5_0 blk{};
    blk.d = f32_to_f16(d);
    pack_high_bits(q, blk.qh);
    pack_nibbles(q, blk.qs);
    store_block(blocks, b, blk);
  }
}

}  // namespace wisp::blocks
