// wisp's own order for the 4-bit codebook types IQ4_NL, MXFP4 (32-value blocks) and IQ4_XS
// (256-value super-blocks): the scalar form of their dot_invariant kernels (x86/codebook8_dots-inl.h,
// neon/codebook8_dots-inl.h) and of their x86 prefill GEMMs (x86/codebook8_gemm-inl.h). Not
// llama.cpp's order, so not pinned to its bits but to these functions, which the SIMD kernels
// reproduce exactly; the order's accuracy against the exact value is bounded by tests
// (src/kernels/README.md).
//
// IQ4_NL, MXFP4 (activations in ActFormat::kQ8_0Split): per block b the exact integer dot isum_b of
// the codebook values (kIq4NlValues, kMxfp4Values) with the activation codes; lane k = b % 8 takes
// acc[k] = fma(float(isum_b), d_x * d_y, acc[k]) (d_x: the half scale, or MXFP4's 2^(e - 128));
// the result is hsum8(acc). A block decoded through its codebook is a Q8_0 block with the same
// scale, and this is the Q8_0 blocks8 order on it (dot_blocks8.cpp).
//
// IQ4_XS (ActFormat::kQ8_K): per super-block b the exact integer S_b = sum over its 8 sub-blocks
// of (6-bit scale - 32) * (codebook values . activation codes); lane k = b % 8 takes
// acc[k] = fma(float(S_b), d_x * d_y, acc[k]); the result is hsum8(acc). As the K-quants' order
// (dot_kquant_super8.cpp) with no minimum.
//
// Why: ggml's orders convert and FMA an 8-lane vector of 4-value partials per block (IQ4_NL) or
// super-block (IQ4_XS); here a block costs one lane of that, the block sums of 8 weight rows come
// out of a vertical reduction when the rows sit in a vector's lanes (the GEMM), and one output's
// operations do not depend on how many tokens or rows are computed with it.
#include <cmath>
#include <cstdint>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"

namespace wisp::kernels::scalar {

namespace {

// x86::hsum8's order: lanes 4..7 onto 0..3, then {0,2} and {1,3}, then the last pair.
float hsum8(const float (&v)[8]) {
  const float r0 = v[4] + v[0], r1 = v[5] + v[1], r2 = v[6] + v[2], r3 = v[7] + v[3];
  return (r0 + r2) + (r1 + r3);
}

// The exact dot of a 32-value nibble block's codebook values with 32 activation codes (element j
// < 16 the low nibble of qs[j], j + 16 the high nibble of qs[j - 16]).
std::int32_t codebook_dot(const std::uint8_t* qs, const std::int8_t* lut, const std::int8_t* a) {
  std::int32_t s = 0;
  for (int j = 0; j < 16; ++j) s += lut[qs[j] & 0x0f] * a[j] + lut[qs[j] >> 4] * a[j + 16];
  return s;
}

inline float scale_of(const BlockIQ4_NL& x) { return f16_to_f32(x.d); }
inline float scale_of(const BlockMXFP4& x) { return e8m0_to_f32_half(x.e); }

template <class Block>
float blocks8(const void* w, const void* a, std::int64_t n, const std::int8_t* lut) {
  const auto* x = static_cast<const Block*>(w);
  const Q8_0SplitRow y = q8_0_split_row(a, n);
  float acc[8] = {};
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const int k = static_cast<int>(b % 8);
    const std::int32_t isum = codebook_dot(x[b].qs, lut, y.qs + b * kQK);
    acc[k] = std::fma(static_cast<float>(isum), scale_of(x[b]) * y.d[b], acc[k]);
  }
  return hsum8(acc);
}

}  // namespace

float dot_iq4_nl_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8<BlockIQ4_NL>(w, a, n, kIq4NlValues);
}

float dot_mxfp4_blocks8(const void* w, const void* a, std::int64_t n) {
  return blocks8<BlockMXFP4>(w, a, n, kMxfp4Values);
}

float dot_iq4_xs_super8(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc[8] = {};
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    std::int32_t s = 0;
    for (int j = 0; j < 8; ++j) {
      const int sc = (((x[b].scales_l[j / 2] >> (4 * (j % 2))) & 0x0f) | (((x[b].scales_h >> (2 * j)) & 3) << 4)) - 32;
      s += sc * codebook_dot(x[b].qs + 16 * j, kIq4NlValues, y[b].qs + 32 * j);
    }
    const int k = static_cast<int>(b % 8);
    acc[k] = std::fma(static_cast<float>(s), f16_to_f32(x[b].d) * y[b].d, acc[k]);
  }
  return hsum8(acc);
}

}  // namespace wisp::kernels::scalar
