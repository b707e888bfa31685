// wisp's own float order for F32, F16 and BF16 weight rows on NEON (DotKernel::dot_invariant,
// activations in f32), compiled into the plain and the SDOT bundle; the scalar form, which these
// reproduce bit for bit, is dot_float.cpp's dot_*_lanes8, and x86/float_tiles-inl.h computes the
// same operations on x86.
//
// The order of one output: the row read as if zero-padded to a multiple of 8; element i goes to
// lane i % 8, acc[i % 8] = fma(w_i, a_i, acc[i % 8]) in order of i (vfmaq_f32: fused, as
// std::fma), and the result is hsum8(acc) (simd-inl.h, the scalar form's tree). The 8 lanes are
// two float32x4 (lanes 0-3, 4-7); F16 (FCVTL) and BF16 (a 16-bit shift) widen to f32 exactly, so
// the weight type only changes the load.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// Weights i .. i + 7 widened to f32, as lanes 0-3 and 4-7.
struct F32Row {
  using Elem = float;
  static void load8(const Elem* w, float32x4_t& lo, float32x4_t& hi) {
    lo = vld1q_f32(w);
    hi = vld1q_f32(w + 4);
  }
};

struct F16Row {
  using Elem = std::uint16_t;
  static void load8(const Elem* w, float32x4_t& lo, float32x4_t& hi) {
    const float16x8_t v = vreinterpretq_f16_u16(vld1q_u16(w));
    lo = vcvt_f32_f16(vget_low_f16(v));
    hi = vcvt_high_f32_f16(v);
  }
};

struct BF16Row {
  using Elem = std::uint16_t;
  static void load8(const Elem* w, float32x4_t& lo, float32x4_t& hi) {
    const uint16x8_t v = vld1q_u16(w);
    lo = vreinterpretq_f32_u32(vshll_n_u16(vget_low_u16(v), 16));
    hi = vreinterpretq_f32_u32(vshll_high_n_u16(v, 16));
  }
};

template <class W>
float dot_lanes8(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const typename W::Elem*>(w);
  const auto* y = static_cast<const float*>(a);
  Acc8 acc;
  float32x4_t w_lo, w_hi;
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    W::load8(x + i, w_lo, w_hi);
    acc.lo = vfmaq_f32(acc.lo, w_lo, vld1q_f32(y + i));
    acc.hi = vfmaq_f32(acc.hi, w_hi, vld1q_f32(y + i + 4));
  }
  if (i < n) {
    // The tail as a zero-padded group: fma(0, 0, acc) is acc (acc starts at +0 and never becomes
    // -0 under round-to-nearest).
    typename W::Elem xt[8] = {};
    float yt[8] = {};
    std::memcpy(xt, x + i, static_cast<std::size_t>(n - i) * sizeof(typename W::Elem));
    std::memcpy(yt, y + i, static_cast<std::size_t>(n - i) * sizeof(float));
    W::load8(xt, w_lo, w_hi);
    acc.lo = vfmaq_f32(acc.lo, w_lo, vld1q_f32(yt));
    acc.hi = vfmaq_f32(acc.hi, w_hi, vld1q_f32(yt + 4));
  }
  return hsum8(acc);
}

float dot_f32_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<F32Row>(w, a, n); }
float dot_f16_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<F16Row>(w, a, n); }
float dot_bf16_lanes8(const void* w, const void* a, std::int64_t n) { return dot_lanes8<BF16Row>(w, a, n); }

}  // namespace
}  // namespace wisp::kernels::neon
