// IQ1_S, IQ1_M: 8-value groups from a ternary grid (formats/blocks/iq_grids.h) shifted by +-1/8.
// Layouts: formats/block_layouts.h. Float order as the gguf package:
// value = (d * (2s + 1)) * (grid + delta), grid + delta exact.
#include "formats/block_layouts.h"
#include "formats/blocks/iq_grids.h"
#include "formats/blocks/reference.h"
#include "formats/half.h"
#include "formats/blocks/exact_float.h"

namespace wisp::blocks {

namespace {

inline void put8(float* y, float dl, const std::int8_t* g, float delta) {
  for (int j = 0; j < 8; ++j) y[j] = dl * (static_cast<float>(g[j]) + delta);
}

}  // namespace

void dequantize_iq1_s(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ1_S", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockIQ1_S>(blocks, b);
    const float d = f16_to_f32(blk.d);
    for (int ib = 0; ib < 8; ++ib) {
      const unsigned qh = blk.qh[ib];
      const float dl = d * static_cast<float>(2 * ((qh >> 12) & 7) + 1);
      const float delta = qh & 0x8000u ? -0.125f : 0.125f;
      for (int l = 0; l < 4; ++l) {
        const unsigned idx = blk.qs[4 * ib + l] | (((qh >> (3 * l)) & 7u) << 8);
        put8(out + b * kQK_K + 32 * ib + 8 * l, dl, kIq1SGrid[idx], delta);
      }
    }
  }
}

void dequantize_iq1_m(const void* blocks, float* out, std::int64_t n) {
  require_whole_blocks("IQ1_M", n, kQK_K);
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const auto blk = load_block<BlockIQ1_M>(blocks, b);
    const auto* sc = blk.scales;
    const auto dbits = static_cast<std::uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) | ((sc[2] >> 4) & 0x0f00) |
                                                  (sc[3] & 0xf000));
    const float d = f16_to_f32(dbits);
    for (int i = 0; i < 32; ++i) {
      const int k = i / 2;  // the 16-value scale group
      const float dl = d * static_cast<float>(2 * ((sc[k / 4] >> (3 * (k % 4))) & 7) + 1);
      const unsigned h = (blk.qh[i / 2] >> (4 * (i % 2))) & 0x0f;
      const float delta = h & 0x08u ? -0.125f : 0.125f;
      put8(out + b * kQK_K + 8 * i, dl, kIq1SGrid[blk.qs[i] | ((h & 7u) << 8)], delta);
    }
  }
}

}  // namespace wisp::blocks
