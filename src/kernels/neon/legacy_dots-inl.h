// NEON dots of the 32-value block types (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0) in exactly the float order
// of the scalar references (dot_legacy.cpp): per block, 8 int32 lanes of 4 consecutive products
// (exact), then acc = fma(d_x * d_y, lane, acc) per lane, folded by hsum8. Every code fits a
// signed byte (Q4_0: -8..7, Q5_0: -16..15, Q4_1/Q5_1: 0..31, Q8_0: any int8), so one signed
// 8-bit dot serves all five types.
#pragma once

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/neon/simd-inl.h"

namespace wisp::kernels::neon {
namespace {

// Codes minus a type's offset (8 for Q4_0, 16 for Q5_0; 0 for the types with a min).
inline Codes32 minus(Codes32 c, int offset) {
  const int8x16_t off = vdupq_n_s8(static_cast<std::int8_t>(offset));
  return {vsubq_s8(c.lo, off), vsubq_s8(c.hi, off)};
}

inline Codes32 q5_codes(const std::uint8_t* qs, const std::uint8_t* qh) {
  const Codes32 low = unpack_nibbles(qs);
  const Codes32 high = fifth_bits(qh);
  return {vorrq_s8(low.lo, high.lo), vorrq_s8(low.hi, high.hi)};
}

// One block's lanes into the accumulator: lanes 0-3 from elements 0-15, lanes 4-7 from 16-31.
inline void add_block(Acc8& acc, float d, Codes32 q, const std::int8_t* a) {
  acc.fma(d, dot4(q.lo, vld1q_s8(a)), dot4(q.hi, vld1q_s8(a + 16)));
}

float dot_q4_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    add_block(acc, h2f(x[b].d) * h2f(y[b].d), minus(unpack_nibbles(x[b].qs), 8), y[b].qs);
  }
  return hsum8(acc);
}

// ggml's repacked Q4_0 GEMV/GEMM: one exact block sum, acc = fma(sum, d_x * d_y, acc).
float dot_q4_0_repacked(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const Codes32 q = minus(unpack_nibbles(x[b].qs), 8);
    const int sum = vaddvq_s32(dot4(dot4(q.lo, vld1q_s8(y[b].qs)), q.hi, vld1q_s8(y[b].qs + 16)));
    acc = __builtin_fmaf(static_cast<float>(sum), h2f(x[b].d) * h2f(y[b].d), acc);
  }
  return acc;
}

float dot_q4_1(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  Acc8 acc;
  float summs = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    summs = __builtin_fmaf(h2f(x[b].m), h2f(y[b].s), summs);
    add_block(acc, h2f(x[b].d) * h2f(y[b].d), unpack_nibbles(x[b].qs), y[b].qs);
  }
  return hsum8(acc) + summs;
}

float dot_q5_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    add_block(acc, h2f(x[b].d) * h2f(y[b].d), minus(q5_codes(x[b].qs, x[b].qh), 16), y[b].qs);
  }
  return hsum8(acc);
}

float dot_q5_1(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  Acc8 acc;
  float summs = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    summs = __builtin_fmaf(h2f(x[b].m), h2f(y[b].s), summs);
    add_block(acc, h2f(x[b].d) * h2f(y[b].d), q5_codes(x[b].qs, x[b].qh), y[b].qs);
  }
  return hsum8(acc) + summs;
}

float dot_q8_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  Acc8 acc;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    add_block(acc, h2f(x[b].d) * h2f(y[b].d), {vld1q_s8(x[b].qs), vld1q_s8(x[b].qs + 16)}, y[b].qs);
  }
  return hsum8(acc);
}

}  // namespace
}  // namespace wisp::kernels::neon
