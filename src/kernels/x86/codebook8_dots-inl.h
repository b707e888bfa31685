// wisp's own dot order for the 4-bit codebook types on x86 (DotKernel::dot_invariant), compiled
// per ISA like nonlinear_dots-inl.h, whose exact integer lanes these reuse; the order and its
// scalar form, which these reproduce bit for bit, are in dot_codebook8.cpp.
//
// IQ4_NL, MXFP4 (ActFormat::kQ8_0Split): per group of 8 blocks of one row, the blocks' 8 integer
// lanes of 4 products each are reduced to one vector of 8 exact block sums (lane k = block
// 8 g + k), then one convert, one multiply by the 8 scale products and one FMA cover the 8 blocks.
// IQ4_XS (ActFormat::kQ8_K): the same per group of 8 super-blocks, each super-block's lanes
// weighted by its sub-block scales in int32 first. The row is read in order, so the weight stream
// is sequential for the prefetcher.
#pragma once

#include <cstdint>
#include <type_traits>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/x86/blocks8_dots-inl.h"
#include "kernels/x86/codebook8_dots512-inl.h"
#include "kernels/x86/nonlinear_dots-inl.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// The scales d_x of the first m (<= 8) blocks at x as 8 floats, zero beyond m (exact).
template <class Block>
inline __m256 codebook_scales8(const Block* x, int m) {
  if constexpr (std::is_same_v<Block, BlockMXFP4>) {
    alignas(32) float s[8] = {};
    for (int k = 0; k < m; ++k) s[k] = block_scale(x[k]);
    return _mm256_load_ps(s);
  } else {
    alignas(16) std::uint16_t h[8] = {};
    for (int k = 0; k < m; ++k) h[k] = x[k].d;
    return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(h)));
  }
}

// IQ4_NL / MXFP4: acc = fma(float(isum), d_x * d_y, acc) per lane of 8 blocks; lanes of the last
// group past the row's end are zero in every operand, and fma(0, 0, acc) is acc (acc starts at
// +0 and never becomes -0 under round-to-nearest).
template <class Block>
inline float codebook_blocks8_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const Q8_0SplitRow y = q8_0_split_row(a, n);
  const __m256i lut = codebook<Block>();
  const std::int64_t nb = n / kQK;
  __m256 acc = _mm256_setzero_ps();
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    prefetch_ahead(x + b, sizeof(Block) * 8);
    __m256i l[8];
    for (int k = 0; k < 8; ++k) l[k] = iq4_lanes(x[b + k].qs, y.qs + (b + k) * kQK, lut);
    const __m256 dd = _mm256_mul_ps(codebook_scales8(x + b, 8), _mm256_loadu_ps(y.d + b));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum32x8(l)), dd, acc);
  }
  if (b < nb) {
    const int m = static_cast<int>(nb - b);
    alignas(32) std::int32_t is[8] = {};
    alignas(32) float yd[8] = {};
    for (int k = 0; k < m; ++k) {
      is[k] = hsum_i32(iq4_lanes(x[b + k].qs, y.qs + (b + k) * kQK, lut));
      yd[k] = y.d[b + k];
    }
    const __m256 dd = _mm256_mul_ps(codebook_scales8(x + b, m), _mm256_load_ps(yd));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(is))), dd, acc);
  }
  return hsum8(acc);
}

float dot_iq4_nl_blocks8(const void* w, const void* a, std::int64_t n) {
  return codebook_blocks8_dot<BlockIQ4_NL>(w, a, n);
}
float dot_mxfp4_blocks8(const void* w, const void* a, std::int64_t n) {
  return codebook_blocks8_dot<BlockMXFP4>(w, a, n);
}

// IQ4_XS: iq4_xs_lanes gives a super-block's 8 int32 lanes (each sub-block's products weighted by
// its scale), exact for any int8 activation code. With AVX-512 VNNI the zmm form
// (codebook8_dots512-inl.h), the same bits.
float dot_iq4_xs_super8(const void* w, const void* a, std::int64_t n) {
#if defined(WISP_CODEBOOK8_ZMM)
  return dot_iq4_xs_super8_zmm(w, a, n);
#else
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i lut = codebook<BlockIQ4_NL>();
  const std::int64_t nb = n / kQK_K;
  __m256 acc = _mm256_setzero_ps();
  std::int64_t b = 0;
  for (; b + 8 <= nb; b += 8) {
    prefetch_ahead(x + b, sizeof(BlockIQ4_XS) * 8);
    __m256i l[8];
    for (int k = 0; k < 8; ++k) l[k] = iq4_xs_lanes(x[b + k], y[b + k].qs, lut);
    const __m256 dy =
        _mm256_setr_ps(y[b].d, y[b + 1].d, y[b + 2].d, y[b + 3].d, y[b + 4].d, y[b + 5].d, y[b + 6].d, y[b + 7].d);
    const __m256 xd = halves8(x + b, [](const BlockIQ4_XS& v) { return v.d; });
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(sum32x8(l)), _mm256_mul_ps(xd, dy), acc);
  }
  if (b < nb) {
    const int m = static_cast<int>(nb - b);
    alignas(32) std::int32_t is[8] = {};
    alignas(32) float dy[8] = {};
    alignas(16) std::uint16_t xd[8] = {};
    for (int k = 0; k < m; ++k) {
      is[k] = hsum_i32(iq4_xs_lanes(x[b + k], y[b + k].qs, lut));
      dy[k] = y[b + k].d;
      xd[k] = x[b + k].d;
    }
    const __m256 dd =
        _mm256_mul_ps(_mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(xd))), _mm256_load_ps(dy));
    acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(is))), dd, acc);
  }
  return hsum8(acc);
#endif
}

}  // namespace
}  // namespace wisp::kernels::x86
