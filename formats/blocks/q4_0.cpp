// Q4_0: symmetric 4-bit, value = d * (q - 8). Layout: formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/legacy_common.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

void dequantize_q4_0(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q4_0", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const auto blk = load_block<BlockQ4_0>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int j = 0; j < kQK; ++j) out[b * kQK + j] = d * static_cast<float>(nibble(blk.qs, j) - 8);
  }
}

// The scale maps the value of largest magnitude to code 0 (d = max / -8, so it lands on -8 and
// the opposite extreme gets the finer side), then codes are trunc(x / d + 8.5): round half up.
// `id` is 1/d in float32, before d is rounded to half (that is what the gguf package does).
void quantize_q4_0(const float* in, void* blocks, std::int64_t n) {
  require_whole_blocks("Q4_0", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const float* x = in + b * kQK;
    const float d = signed_absmax(x) / -8.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    std::uint8_t q[kQK];
    for (int j = 0; j < kQK; ++j) q[j] = truncate_code(x[j] * id + 8.5f, 15);
    BlockQ4_0 blk{};
    blk.d = f32_to_f16(d);
    pack_nibbles(q, blk.qs);
    store_block(blocks, b, blk);
  }
}

}  // namespace wisp::blocks
