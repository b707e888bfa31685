// MXFP4: E2M1 codes (doubled to integers) with a shared E8M0 exponent per 32 values. Layout:
// formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

void dequantize_mxfp4(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("MXFP4", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const auto blk = load_block<BlockMXFP4>(blocks, b);
    const float d = e8m0_to_f32_half(blk.e);
    for (int j = 0; j < kQK; ++j) {
      const int q = j < 16 ? blk.qs[j] & 0x0f : blk.qs[j - 16] >> 4;
      out[b * kQK + j] = d * static_cast<float>(kMxfp4Values[q]);
    }
  }
}

}  // namespace wisp::blocks
