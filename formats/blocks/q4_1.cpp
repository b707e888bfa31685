// Q4_1: asymmetric 4-bit, value = d * q + m with m the block minimum. Layout:
// formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/legacy_common.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

void dequantize_q4_1(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q4_1", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const auto blk = load_block<BlockQ4_1>(blocks, b);
    const float d = f16_to_f32(blk.d);
    const float m = f16_to_f32(blk.m);
    for (int j = 0; j < kQK; ++j) out[b * kQK + j] = d * static_cast<float>(nibble(blk.qs, j)) + m;
  }
}

// d spreads [min, max] over 15 steps; codes are trunc((x - min) / d + 0.5), with 1/d taken in
// float32 before d is rounded to half.
void quantize_q4_1(const float* in, void* blocks, std::int64_t n) {
  require_whole_blocks("Q4_1", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const float* x = in + b * kQK;
    const float mn = block_min(x);
    const float d = (block_max(x) - mn) / 15.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    std::uint8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = truncate_code((x[j] - mn) * id + 0.5f, 15);
    BlockQ4_1 blk{};
    blk.d = f32_to_f16(d);
    blk.m = f32_to_f16(mn);
    pack_nibbles(q, blk.qs);
    store_block(blocks, b, blk);
  }
}

}  // namespace wisp::blocks
