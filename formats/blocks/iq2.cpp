// IQ2_XXS, IQ2_XS, IQ2_S: 8-value groups of magnitudes from a fixed grid (formats/blocks/iq_grids.h)
// with signs. Layouts: formats/block_layouts.h. The float order is the gguf package's:
// db = (d * (0.5 + s)) * 0.25, then value = (db * grid) * sign.
#include <cstring>

#include "formats/block_layouts.h"
#include "formats/blocks/iq_grids.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

namespace {

inline float iq2_scale(float d, int s) { return d * (0.5f + static_cast<float>(s)) * 0.25f; }

// Eight values of grid row `g` times db, negated where bit j of `signs` is set.
inline void put8(float* y, float db, const std::uint8_t* g, unsigned signs) {
  for (int j = 0; j < 8; ++j) y[j] = db * static_cast<float>(g[j]) * ((signs >> j) & 1u ? -1.0f : 1.0f);
}

}  // namespace

void dequantize_iq2_xxs(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ2_XXS", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockIQ2_XXS>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int ib = 0; ib < 8; ++ib) {
      std::uint32_t a[2];
      std::memcpy(a, blk.qs + 4 * ib, sizeof a);
      const float db = iq2_scale(d, static_cast<int>(a[1] >> 28));
      for (int l = 0; l < 4; ++l) {
        const unsigned idx = (a[0] >> (8 * l)) & 0xff;
        put8(out + b * kQK_K + 32 * ib + 8 * l, db, kIq2XxsGrid[idx], iq_sign_pattern((a[1] >> (7 * l)) & 127));
      }
    }
  }
}

void dequantize_iq2_xs(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ2_XS", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockIQ2_XS>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int i = 0; i < 32; ++i) {
      const int k = i / 2;  // the 16-value scale group
      const float db = iq2_scale(d, (blk.scales[k / 2] >> (4 * (k % 2))) & 0x0f);
      put8(out + b * kQK_K + 8 * i, db, kIq2XsGrid[blk.qs[i] & 511], iq_sign_pattern(blk.qs[i] >> 9));
    }
  }
}

void dequantize_iq2_s(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ2_S", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockIQ2_S>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int i = 0; i < 32; ++i) {
      const int k = i / 2;
      const float db = iq2_scale(d, (blk.scales[k / 2] >> (4 * (k % 2))) & 0x0f);
      const unsigned idx = blk.qs[i] | (((blk.qh[i / 4] >> (2 * (i % 4))) & 3u) << 8);
      put8(out + b * kQK_K + 8 * i, db, kIq2SGrid[idx], blk.signs[i]);
    }
  }
}

}  // namespace wisp::blocks
