// Q8_0: symmetric 8-bit, value = d * q with q in [-127, 127]. Layout: formats/block_layouts.h.
#include <cmath>

#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

void dequantize_q8_0(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("Q8_0", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const auto blk = load_block<BlockQ8_0>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int j = 0; j < kQK; ++j) out[b * kQK + j] = static_cast<float>(blk.qs[j]) * d;
  }
}

// d = max|x| / 127 (so -128 is never used and the range is symmetric); codes round half away
// from zero (std::round, the same as the gguf package's np_roundf) with 1/d in float32.
void quantize_q8_0(const float* in, void* blocks, std::int64_t n) {
  require_whole_blocks("Q8_0", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const float* x = in + b * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;
    const float d = amax / 127.0f;
    const float id = d == 0.0f ? 0.0f : 1.0f / d;
    BlockQ8_0 blk{};
    blk.d = f32_to_f16(d);
    for (int j = 0; j < kQK; ++j) {
      float r = std::round(x[j] * id);
      if (!(r == r)) r = 0.0f;  // a NaN input: defined result instead of undefined behaviour
      blk.qs[j] = static_cast<std::int8_t>(r > 127.0f ? 127.0f : (r < -127.0f ? -127.0f : r));
    }
    store_block(blocks, b, blk);
  }
}

}  // namespace wisp::blocks
