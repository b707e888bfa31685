// The prefill GEMMs of wisp's codebook order on NEON for IQ4_NL, MXFP4 and IQ4_XS
// (MultiDot::gemm8): up to 8 weight rows against every token of a batch, each output
// bit-identical to the one-token kernel dot_{iq4_nl,mxfp4}_blocks8 / dot_iq4_xs_super8
// (codebook8_dots-inl.h, scalar form dot_codebook8.cpp), so batch invariance holds. Compiled into
// the plain and the SDOT bundle.
//
// IQ4_NL, MXFP4: a block decoded through its codebook (one TBL per 16 values, as the one-token kernel decodes it)
// is a Q8_0 block with the block's scale, so these are blocks8_gemm-inl.h's GEMM with the codebook
// values as the codes: the values are decoded once per call into the same scratch tile (320 bytes
// per block) and every token runs blocks8's loop on it. The one-token kernel's float steps are
// blocks8_dot's with the scale d_x = block_scale (IQ4_NL's half, MXFP4's 2^(e - 128), exact), no
// offset and no minimum; the tile holds the same d_x as floats, so the products d_x * d_y and the
// chains are the same. Without SDOT the int16 bound is the values': IQ4_NL's reach -127, so each
// product is widened at once (Q8_0's path); MXFP4's are at most 12 in magnitude (the doubled E2M1
// values), so 8 products per int16 lane (<= 12288) and two such lanes still fit, the 4-bit path.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/blocks8_gemm-inl.h"
#include "kernels/neon/nonlinear_dots-inl.h"
#include "kernels/neon/super8_gemm-inl.h"

namespace wisp::kernels::neon {
namespace {

template <class B, ProductRange R>
struct CodebookTraits {
  using Block = B;
  static constexpr bool kMin = false;
  static constexpr int kOffsetShift = 0;
  static constexpr ProductRange kRange = R;
  int8x16_t lut = codebook<B>();
  Codes32 codes(const Block& x) const { return lut_values(x.qs, lut); }
  float d(const Block& x) const { return block_scale(x); }
};

struct IQ4_NLTraits : CodebookTraits<BlockIQ4_NL, ProductRange::kByte> {};
struct MXFP4Traits : CodebookTraits<BlockMXFP4, ProductRange::kNibble> {};

// IQ4_XS (ActFormat::kQ8_K): super8_gemm-inl.h's GEMM on the codebook values, the sub-block
// scales sc - 32, no minimum; d_x the half d (dot_iq4_xs_super8's float(d_x) * d_y).
struct IQ4_XSTraits {
  using Block = BlockIQ4_XS;
  static constexpr bool kMin = false;
  static constexpr ProductRange kRange = ProductRange::kByte;  // the values reach -127
  int8x16_t lut = codebook<BlockIQ4_NL>();
  Codes32 codes(const Block& x, int j) const { return lut_values(x.qs + 16 * j, lut); }
  void scales(const Block& x, int (&sc)[8], int (&)[8]) const {
    for (int j = 0; j < 8; ++j)
      sc[j] = (((x.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | (((x.scales_h >> (2 * j)) & 3) << 4)) - 32;
  }
  float d(const Block& x) const { return h2f(x.d); }
  float dmin(const Block&) const { return 0.0f; }
};

}  // namespace
}  // namespace wisp::kernels::neon
