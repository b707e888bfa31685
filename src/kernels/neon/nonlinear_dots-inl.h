// NEON dots of the 4-bit codebook types (IQ4_NL, IQ4_XS, MXFP4, NVFP4) in exactly the float orders of
// their scalar references (dot_nonlinear.cpp, where the orders are described): the codes go through
// the 16-entry codebook with one table lookup (TBL), the integer lanes of 4 consecutive products
// come from dot4 (SDOT where the build has it), and every float step is the reference's.
#pragma once

#include <bit>
#include <cstdint>
#include <type_traits>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/simd-inl.h"
#include "kernels/ue4m3_table.h"

namespace wisp::kernels::neon {
namespace {

// The 32-value codebook types (IQ4_NL: a half scale, MXFP4: an E8M0 exponent) share the loops.
inline float block_scale(const BlockIQ4_NL& x) { return h2f(x.d); }
// 2^(e - 128) as the reference computes it (subnormal for e < 2); local, so no inline copy built
// with this file's flags is shared with other translation units.
inline float block_scale(const BlockMXFP4& x) {
  const std::uint32_t bits = x.e < 2 ? 0x00200000u << x.e : static_cast<std::uint32_t>(x.e - 1) << 23;
  return std::bit_cast<float>(bits);
}
template <typename Block>
inline int8x16_t codebook() {
  // The table chosen outside the call: clang's vld1q_s8 is a macro, and the comma of the
  // template argument list would split its argument.
  const std::int8_t* values = std::is_same_v<Block, BlockMXFP4> ? kMxfp4Values : kIq4NlValues;
  return vld1q_s8(values);
}

// The 32 codebook values of a nibble block (elements 0-15 in lo, 16-31 in hi).
inline Codes32 lut_values(const std::uint8_t* qs, int8x16_t lut) {
  const Codes32 c = unpack_nibbles(qs);
  return {vqtbl1q_s8(lut, vreinterpretq_u8_s8(c.lo)), vqtbl1q_s8(lut, vreinterpretq_u8_s8(c.hi))};
}

// A block's 32 products in 4 int32 lanes of 8 each (exact), and their sum.
inline int32x4_t block_lanes(Codes32 v, const std::int8_t* a) {
  return dot4(dot4(v.lo, vld1q_s8(a)), v.hi, vld1q_s8(a + 16));
}
inline int block_sum(Codes32 v, const std::int8_t* a) { return vaddvq_s32(block_lanes(v, a)); }

template <typename Block>
float pairs_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const int8x16_t lut = codebook<Block>();
  const std::int64_t nb = n / kQK;
  Acc8 acc[2];
  std::int64_t b = 0;
  for (; b + 1 < nb; b += 2) {
    for (int k = 0; k < 2; ++k) {
      const Codes32 v = lut_values(x[b + k].qs, lut);
      const std::int8_t* q = y[b + k].qs;
      acc[k].fma(h2f(y[b + k].d) * block_scale(x[b + k]), dot4(v.lo, vld1q_s8(q)), dot4(v.hi, vld1q_s8(q + 16)));
    }
  }
  Acc8 folded;
  folded.lo = vaddq_f32(acc[0].lo, acc[1].lo);
  folded.hi = vaddq_f32(acc[0].hi, acc[1].hi);
  float sum = hsum8(folded);
  for (; b < nb; ++b) {
    const int s = block_sum(lut_values(x[b].qs, lut), y[b].qs);
    sum = __builtin_fmaf(h2f(y[b].d) * block_scale(x[b]), static_cast<float>(s), sum);
  }
  return sum;
}

template <typename Block>
float repacked_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const int8x16_t lut = codebook<Block>();
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const int s = block_sum(lut_values(x[b].qs, lut), y[b].qs);
    acc = __builtin_fmaf(static_cast<float>(s), block_scale(x[b]) * h2f(y[b].d), acc);
  }
  return acc;
}

float dot_iq4_nl(const void* w, const void* a, std::int64_t n) { return pairs_dot<BlockIQ4_NL>(w, a, n); }
float dot_iq4_nl_repacked(const void* w, const void* a, std::int64_t n) { return repacked_dot<BlockIQ4_NL>(w, a, n); }
float dot_mxfp4(const void* w, const void* a, std::int64_t n) { return pairs_dot<BlockMXFP4>(w, a, n); }
float dot_mxfp4_repacked(const void* w, const void* a, std::int64_t n) { return repacked_dot<BlockMXFP4>(w, a, n); }

// NVFP4 (two Q8_0 activation blocks per 64-value block) in the reference's order
// (dot_nonlinear.cpp): one 8-lane accumulator; per block each half (16 bytes of qs, one activation
// block) in turn, lanes 0-3 the 4-value sums of its first sub-block times that sub-block's scale,
// lanes 4-7 those of its second. A half's bytes 0-7 hold the first sub-block (values 0-7 in the
// low nibbles, 8-15 in the high ones), bytes 8-15 the second, so each sub-block's 16 values in
// order are the low 8 bytes of the low-nibble and high-nibble lookups (or their high 8 bytes).
float dot_nvfp4(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockNVFP4*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const int8x16_t lut = codebook<BlockMXFP4>();
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK_NVFP4; ++b) {
    for (int h = 0; h < 2; ++h) {
      const BlockQ8_0& yb = y[2 * b + h];
      const Codes32 v = lut_values(x[b].qs + 16 * h, lut);
      const int8x16_t first = vreinterpretq_s8_s64(vzip1q_s64(vreinterpretq_s64_s8(v.lo), vreinterpretq_s64_s8(v.hi)));
      const int8x16_t second = vreinterpretq_s8_s64(vzip2q_s64(vreinterpretq_s64_s8(v.lo), vreinterpretq_s64_s8(v.hi)));
      const float dy = h2f(yb.d);
      acc.fma(kUe4m3Half.v[x[b].d[2 * h]] * dy, kUe4m3Half.v[x[b].d[2 * h + 1]] * dy, dot4(first, vld1q_s8(yb.qs)),
              dot4(second, vld1q_s8(yb.qs + 16)));
    }
  }
  return hsum8(acc);
}

float dot_iq4_nl_batched(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_NL*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const int8x16_t lut = codebook<BlockIQ4_NL>();
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const Codes32 v = lut_values(x[b].qs, lut);
    acc.fma(h2f(x[b].d) * h2f(y[b].d), dot4(v.lo, vld1q_s8(y[b].qs)), dot4(v.hi, vld1q_s8(y[b].qs + 16)));
  }
  return hsum8(acc);
}

// IQ4_XS: the 8 lanes of one super-block (lo: lanes 0-3, hi: 4-7), each sub-block's 4-value sums
// times its scale.
struct XsLanes {
  int32x4_t lo, hi;
};

inline XsLanes iq4_xs_lanes(const BlockIQ4_XS& x, const std::int8_t* a, int8x16_t lut) {
  XsLanes l{vdupq_n_s32(0), vdupq_n_s32(0)};
  for (int s = 0; s < 8; ++s) {
    const int sc = (((x.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f) | (((x.scales_h >> (2 * s)) & 3) << 4)) - 32;
    const Codes32 v = lut_values(x.qs + 16 * s, lut);
    l.lo = vmlaq_n_s32(l.lo, dot4(v.lo, vld1q_s8(a + 32 * s)), sc);
    l.hi = vmlaq_n_s32(l.hi, dot4(v.hi, vld1q_s8(a + 32 * s + 16)), sc);
  }
  return l;
}

float dot_iq4_xs(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const int8x16_t lut = codebook<BlockIQ4_NL>();
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const XsLanes l = iq4_xs_lanes(x[b], y[b].qs, lut);
    acc.fma(h2f(x[b].d) * y[b].d, l.lo, l.hi);
  }
  return hsum8(acc);
}

float dot_iq4_xs_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const int8x16_t lut = codebook<BlockIQ4_NL>();
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const XsLanes l = iq4_xs_lanes(x[b], y[b].qs, lut);
    const int s = vaddvq_s32(vaddq_s32(l.lo, l.hi));
    acc = __builtin_fmaf(h2f(x[b].d) * static_cast<float>(s), y[b].d, acc);
  }
  return acc;
}

}  // namespace
}  // namespace wisp::kernels::neon
