// NVFP4: MXFP4's doubled E2M1 codes with an unsigned E4M3 scale per 16 values. Layout:
// formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"

namespace wisp::blocks {

void dequantize_nvfp4(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("NVFP4", n, kQK_NVFP4);
  for (std::int64_t b = 0; b < n / kQK_NVFP4; ++b) {
    const auto blk = load_block<BlockNVFP4>(blocks, b);
    float* o = out + b * kQK_NVFP4;
    for (int s = 0; s < kQK_NVFP4 / kQK_NVFP4_Sub; ++s) {
      const float d = ue4m3_to_f32_half(blk.d[s]);
      for (int j = 0; j < kQK_NVFP4_Sub / 2; ++j) {
        const std::uint8_t q = blk.qs[s * (kQK_NVFP4_Sub / 2) + j];
        o[s * kQK_NVFP4_Sub + j] = d * static_cast<float>(kMxfp4Values[q & 0x0f]);
        o[s * kQK_NVFP4_Sub + kQK_NVFP4_Sub / 2 + j] = d * static_cast<float>(kMxfp4Values[q >> 4]);
      }
    }
  }
}

}  // namespace wisp::blocks
