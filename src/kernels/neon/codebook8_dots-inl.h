// wisp's own dot order for the 4-bit codebook types on NEON (DotKernel::dot_invariant), compiled
// into the plain and the SDOT bundle like nonlinear_dots-inl.h, whose codebook lookups (TBL) and
// exact integer lanes these reuse; the order and its scalar form, which these reproduce bit for
// bit, are in dot_codebook8.cpp, and x86/codebook8_dots-inl.h computes the same operations on x86,
// so an ARM and an x86 host give the same bits for the same row.
//
// IQ4_NL, MXFP4 (ActFormat::kQ8_0Split): the 32-value types' loop (blocks8_dots-inl.h) with the
// codebook's exact block sums: per group of 8 blocks, two int32x4 of block sums (blocks 0-3, 4-7),
// one convert, one multiply by the scale products and one fused multiply-add per half.
// IQ4_XS (ActFormat::kQ8_K): the K-quants' loop (kquant_super8_dots-inl.h) with each
// super-block's exact sum of iq4_xs_lanes (sub-block scales applied in int32), no minimum.
#pragma once

#include <cstdint>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/blocks8_dots-inl.h"
#include "kernels/neon/kquant_super8_dots-inl.h"
#include "kernels/neon/nonlinear_dots-inl.h"
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// 4 consecutive codebook blocks' exact sums against the activation codes at a.
template <class Block>
inline int32x4_t codebook_sums4(const Block* x, const std::int8_t* a, int8x16_t lut) {
  return sum4x4(block_lanes(lut_values(x[0].qs, lut), a), block_lanes(lut_values(x[1].qs, lut), a + 32),
                block_lanes(lut_values(x[2].qs, lut), a + 64), block_lanes(lut_values(x[3].qs, lut), a + 96));
}

// MXFP4's scales 2^(e - 128) of 8 consecutive blocks (block_scale, exact).
struct Mxfp4Scales8 {
  void operator()(const BlockMXFP4* x, float32x4_t& lo, float32x4_t& hi) const {
    alignas(16) float s[8];
    for (int k = 0; k < 8; ++k) s[k] = block_scale(x[k]);
    lo = vld1q_f32(s);
    hi = vld1q_f32(s + 4);
  }
};

float dot_iq4_nl_blocks8(const void* w, const void* a, std::int64_t n) {
  const int8x16_t lut = codebook<BlockIQ4_NL>();
  return blocks8_dot<BlockIQ4_NL, false>(
      w, a, n,
      [lut](const BlockIQ4_NL* x, const std::int8_t* qs, const std::int32_t*) { return codebook_sums4(x, qs, lut); });
}

float dot_mxfp4_blocks8(const void* w, const void* a, std::int64_t n) {
  const int8x16_t lut = codebook<BlockMXFP4>();
  return blocks8_dot<BlockMXFP4, false>(
      w, a, n,
      [lut](const BlockMXFP4* x, const std::int8_t* qs, const std::int32_t*) { return codebook_sums4(x, qs, lut); },
      Mxfp4Scales8{});
}

float dot_iq4_xs_super8(const void* w, const void* a, std::int64_t n) {
  const int8x16_t lut = codebook<BlockIQ4_NL>();
  return super8_dot<BlockIQ4_XS, false>(w, a, n, [lut](const BlockIQ4_XS& x, const BlockQ8_K& y) {
    const XsLanes l = iq4_xs_lanes(x, y.qs, lut);
    return SuperSums{vaddvq_s32(vaddq_s32(l.lo, l.hi)), 0};
  });
}

}  // namespace
}  // namespace wisp::kernels::neon
