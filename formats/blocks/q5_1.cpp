// Q5_1: asymmetric 5-bit, value = d * q + m. Layout: formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/legacy_common.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

void dequantize_q5_1(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q5_1", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const auto blk = load_block<BlockQ5_1>(blocks, b);
    const float d = f16_to_f32(blk.d);
    const float m = f16_to_f32(blk.m);
    for (int j = 0; j < kQK; ++j) {
      const int q = nibble(blk.qs, j) | (high_bit(blk.qh, j) << 4);
      out[b * kQK + j] = d * static_cast<float>(q) + m;
    }
  }
}

// As Q4_1 with 31 steps: codes trunc((x - min) / d + 0.5) saturated at 31.
void quantize_q5_1(const float* in, void* blocks, std::int64_t n) {
  require_whole_blocks("Q5_1", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const float* x = in + b * kQK;
    const float mn = block_min(x);
    const float d = (block_max(x) - mn) / 31.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    std::uint8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = truncate_code((x[j] - mn) * id + 0.5f, 31);
    BlockQ5_1 blk{};
    blk.d = f32_to_f16(d);
    blk.m = f32_to_f16(mn);
    pack_high_bits(q, blk.qh);
    pack_nibbles(q, blk.qs);
    store_block(blocks, b, blk);
  }
}

}  // namespace wisp::blocks
