// IQ4_NL and IQ4_XS: 4-bit indices into a fixed non-uniform codebook (kIq4NlValues). Layouts:
// formats/block_layouts.h.
#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

namespace {

// Element j of a 32-value nibble block (Q4_0's order) as its codebook value.
inline float iq4_value(const std::uint8_t* qs, int j) {
  const int q = j < 16 ? qs[j] & 0x0f : qs[j - 16] >> 4;
  return static_cast<float>(kIq4NlValues[q]);
}

}  // namespace

void dequantize_iq4_nl(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ4_NL", n, kQK);
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const auto blk = load_block<BlockIQ4_NL>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int j = 0; j < kQK; ++j) out[b * kQK + j] = d * iq4_value(blk.qs, j);
  }
}

// value = (d * (sc - 32)) * codebook[q]: the sub-block scale is rounded to float32 first, as the
// gguf package computes it.
void dequantize_iq4_xs(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ4_XS", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockIQ4_XS>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int s = 0; s < 8; ++s) {
      const int sc = ((blk.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f) | (((blk.scales_h >> (2 * s)) & 3) << 4);
      const float dl = d * static_cast<float>(sc - 32);
      for (int j = 0; j < 32; ++j) out[b * kQK_K + 32 * s + j] = dl * iq4_value(blk.qs + 16 * s, j);
    }
  }
}

}  // namespace wisp::blocks
