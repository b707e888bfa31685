// IQ3_XXS, IQ3_S: 4-value groups of magnitudes from a fixed grid (formats/blocks/iq_grids.h) with
// signs. Layouts: formats/block_layouts.h. Float order as the gguf package:
// IQ3_XXS db = (d * (0.5 + s)) * 0.5, IQ3_S db = d * (1 + 2s); value = (db * grid) * sign.
#include <cstring>

#include "formats/block_layouts.h"
#include "formats/blocks/iq_grids.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

void dequantize_iq3_xxs(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ3_XXS", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockIQ3_XXS>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int ib = 0; ib < 8; ++ib) {
      std::uint32_t aux;
      std::memcpy(&aux, blk.qs + kQK_K / 4 + 4 * ib, sizeof aux);
      const float db = d * (0.5f + static_cast<float>(aux >> 28)) * 0.5f;
      for (int e = 0; e < 32; ++e) {
        const int i = 8 * ib + e / 4;  // grid index of this value's 4-value group
        const unsigned signs = iq_sign_pattern((aux >> (7 * (e / 8))) & 127);
        const float sign = (signs >> (e % 8)) & 1u ? -1.0f : 1.0f;
        out[b * kQK_K + 32 * ib + e] = db * static_cast<float>(kIq3XxsGrid[blk.qs[i]][e % 4]) * sign;
      }
    }
  }
}

void dequantize_iq3_s(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ3_S", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockIQ3_S>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int e = 0; e < kQK_K; ++e) {
      const int k = e / 32;
      const int s = (blk.scales[k / 2] >> (4 * (k % 2))) & 0x0f;
      const float db = d * static_cast<float>(1 + 2 * s);
      const int i = e / 4;
      const unsigned idx = blk.qs[i] | (((blk.qh[i / 8] >> (i % 8)) & 1u) << 8);
      const float sign = (blk.signs[e / 8] >> (e % 8)) & 1u ? -1.0f : 1.0f;
      out[b * kQK_K + e] = db * static_cast<float>(kIq3SGrid[idx][e % 4]) * sign;
    }
  }
}

}  // namespace wisp::blocks
