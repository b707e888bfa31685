// SIMD dots of the 4-bit codebook types (IQ4_NL, IQ4_XS, MXFP4) in exactly the float orders of
// their scalar references (dot_nonlinear.cpp, where the orders are described). The codes go through
// the 16-entry codebook with one byte shuffle; codebook values lie in [-127, 113] and activation
// codes in [-128, 127]; pairs_s8s8 multiplies them exactly. Compiled into the AVX2 and AVX-512
// tables alike (integer parts are exact, the float steps are 8-lane either way).
// The dots are [[maybe_unused]]: the multi-output files include this for its helpers alone
// (codebook8_gemm-inl.h).
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/ue4m3_table.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// The 32 codebook values of a nibble block (element order as unpack_nibbles).
inline __m256i iq4_values(const std::uint8_t* qs, __m256i lut) { return _mm256_shuffle_epi8(lut, unpack_nibbles(qs)); }

// 16 int16 pair sums of w[j] * a[j], exact for |w| <= 127 and any int8 a: |a| as an unsigned byte
// (128 for -128) times w with a's sign, so no product overflows and pairs stay below 2^15.
inline __m256i pairs_s8s8(__m256i w, __m256i a) {
  return _mm256_maddubs_epi16(_mm256_abs_epi8(a), _mm256_sign_epi8(w, a));
}

// 8 int32 lanes of 4 consecutive products.
inline __m256i iq4_lanes(const std::uint8_t* qs, const std::int8_t* a, __m256i lut) {
  const __m256i av = load32(a);
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  // |a| as unsigned bytes times w with a's sign, 4 products per int32 lane in one vpdpbusd: exact.
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(av), _mm256_sign_epi8(iq4_values(qs, lut), av));
#else
  return _mm256_madd_epi16(pairs_s8s8(iq4_values(qs, lut), av), _mm256_set1_epi16(1));
#endif
}

// The 32-value codebook types (IQ4_NL: a half scale, MXFP4: an E8M0 exponent) share the loops.
inline float block_scale(const BlockIQ4_NL& x) { return h2f(x.d); }
// 2^(e - 128) as the reference computes it (subnormal for e < 2); local, so no inline copy built
// with this ISA's flags is shared with other translation units.
inline float block_scale(const BlockMXFP4& x) {
  const std::uint32_t bits = x.e < 2 ? 0x00200000u << x.e : static_cast<std::uint32_t>(x.e - 1) << 23;
  return std::bit_cast<float>(bits);
}
template <typename Block>
inline __m256i codebook() {
  const __m128i lut = load16(std::is_same_v<Block, BlockMXFP4> ? kMxfp4Values : kIq4NlValues);
  return _mm256_set_m128i(lut, lut);
}

template <typename Block>
float pairs_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const __m256i lut = codebook<Block>();
  const std::int64_t nb = n / kQK;
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  std::int64_t b = 0;
  for (; b + 1 < nb; b += 2) {
    const __m256i l0 = iq4_lanes(x[b].qs, y[b].qs, lut);
    const __m256i l1 = iq4_lanes(x[b + 1].qs, y[b + 1].qs, lut);
    acc0 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(y[b].d) * block_scale(x[b])), _mm256_cvtepi32_ps(l0), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_set1_ps(h2f(y[b + 1].d) * block_scale(x[b + 1])), _mm256_cvtepi32_ps(l1), acc1);
  }
  float sum = hsum8(_mm256_add_ps(acc0, acc1));
  for (; b < nb; ++b) {
    const int s = hsum_i32(iq4_lanes(x[b].qs, y[b].qs, lut));
    sum = __builtin_fmaf(h2f(y[b].d) * block_scale(x[b]), static_cast<float>(s), sum);
  }
  return sum;
}

template <typename Block>
float repacked_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const __m256i lut = codebook<Block>();
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const int s = hsum_i32(iq4_lanes(x[b].qs, y[b].qs, lut));
    acc = __builtin_fmaf(static_cast<float>(s), block_scale(x[b]) * h2f(y[b].d), acc);
  }
  return acc;
}

[[maybe_unused]] float dot_iq4_nl(const void* w, const void* a, std::int64_t n) {
  return pairs_dot<BlockIQ4_NL>(w, a, n);
}
[[maybe_unused]] float dot_iq4_nl_repacked(const void* w, const void* a, std::int64_t n) {
  return repacked_dot<BlockIQ4_NL>(w, a, n);
}
[[maybe_unused]] float dot_mxfp4(const void* w, const void* a, std::int64_t n) {
  return pairs_dot<BlockMXFP4>(w, a, n);
}
[[maybe_unused]] float dot_mxfp4_repacked(const void* w, const void* a, std::int64_t n) {
  return repacked_dot<BlockMXFP4>(w, a, n);
}

// The 32 code values of two NVFP4 sub-blocks (16 bytes of qs) in element order: sub-block 0's low
// then high nibbles of bytes 0-7 in the low 128 bits, sub-block 1's (bytes 8-15) in the high ones.
inline __m256i nvfp4_values(const std::uint8_t* qs, __m128i lut) {
  const __m128i x = load16(qs), m = _mm_set1_epi8(0x0f);
  const __m128i lo = _mm_shuffle_epi8(lut, _mm_and_si128(x, m));
  const __m128i hi = _mm_shuffle_epi8(lut, _mm_and_si128(_mm_srli_epi16(x, 4), m));
  return _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
}

// The reference's order (dot_nonlinear.cpp): one accumulator; per 64-value block each half (one
// Q8_0 activation block) in turn, lanes 0-3 scaled by its first sub-block, lanes 4-7 its second.
[[maybe_unused]] float dot_nvfp4(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockNVFP4*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const __m128i lut = load16(kMxfp4Values);
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_NVFP4; ++b) {
    for (int h = 0; h < 2; ++h) {
      const BlockQ8_0& yb = y[2 * b + h];
      const __m256i wv = nvfp4_values(x[b].qs + 16 * h, lut), av = load32(yb.qs);
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
      const __m256i lanes = _mm256_dpbusd_epi32(_mm256_setzero_si256(), _mm256_abs_epi8(av), _mm256_sign_epi8(wv, av));
#else
      const __m256i lanes = _mm256_madd_epi16(pairs_s8s8(wv, av), _mm256_set1_epi16(1));
#endif
      const float dy = h2f(yb.d);
      const __m256 scales = _mm256_set_m128(_mm_set1_ps(kUe4m3Half.v[x[b].d[2 * h + 1]] * dy),
                                            _mm_set1_ps(kUe4m3Half.v[x[b].d[2 * h]] * dy));
      acc = _mm256_fmadd_ps(scales, _mm256_cvtepi32_ps(lanes), acc);
    }
  }
  return hsum8(acc);
}

[[maybe_unused]] float dot_iq4_nl_batched(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_NL*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const __m256i lut = codebook<BlockIQ4_NL>();
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const __m256i l = iq4_lanes(x[b].qs, y[b].qs, lut);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[b].d) * h2f(y[b].d)), _mm256_cvtepi32_ps(l), acc);
  }
  return hsum8(acc);
}

// IQ4_XS: the 8 lanes of one super-block, each sub-block's pair sums weighted by its scale.
inline __m256i iq4_xs_lanes(const BlockIQ4_XS& x, const std::int8_t* a, __m256i lut) {
  __m256i lanes = _mm256_setzero_si256();
  for (int s = 0; s < 8; ++s) {
    const int sc = (((x.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f) | (((x.scales_h >> (2 * s)) & 3) << 4)) - 32;
    const __m256i p = pairs_s8s8(iq4_values(x.qs + 16 * s, lut), load32(a + 32 * s));
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    lanes = _mm256_dpwssd_epi32(lanes, p, _mm256_set1_epi16(static_cast<short>(sc)));
#else
    lanes = _mm256_add_epi32(lanes, _mm256_madd_epi16(p, _mm256_set1_epi16(static_cast<short>(sc))));
#endif
  }
  return lanes;
}

[[maybe_unused]] float dot_iq4_xs(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i lut = codebook<BlockIQ4_NL>();
  __m256 acc = _mm256_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const __m256i lanes = iq4_xs_lanes(x[b], y[b].qs, lut);
    acc = _mm256_fmadd_ps(_mm256_set1_ps(h2f(x[b].d) * y[b].d), _mm256_cvtepi32_ps(lanes), acc);
  }
  return hsum8(acc);
}

[[maybe_unused]] float dot_iq4_xs_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const __m256i lut = codebook<BlockIQ4_NL>();
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const int s = hsum_i32(iq4_xs_lanes(x[b], y[b].qs, lut));
    acc = __builtin_fmaf(h2f(x[b].d) * static_cast<float>(s), y[b].d, acc);
  }
  return acc;
}

}  // namespace
}  // namespace wisp::kernels::x86
