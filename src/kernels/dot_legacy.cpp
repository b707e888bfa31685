// Scalar dots of the 32-value block types against Q8_0 / Q8_1 activations. Per block: an exact
// integer dot of the codes, then one float update of the running sum in ggml's order
// (ggml_vec_dot_*_generic), so the result matches llama.cpp's CPU backend up to float
// accumulation order in its SIMD variants.
#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"

namespace wisp::kernels::scalar {

namespace {

// The fifth bits of Q5_0/Q5_1: bit j of the little-endian 32-bit qh is bit 4 of element j.
inline std::uint32_t load_qh(const std::uint8_t* qh) {
  std::uint32_t v;
  std::memcpy(&v, qh, sizeof v);
  return v;
}

// The integer dot of 32 codes with 32 activation codes. A plain loop over bytes that compilers
// vectorize (widen, multiply, add); the codes are unpacked to bytes first for that reason.
inline int dot32(const std::int8_t* a, const std::int8_t* b) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += a[j] * b[j];
  return sum;
}

// Codes of a 4-bit block: element j < 16 is the low nibble of qs[j], j + 16 the high nibble.
// Eight nibbles at a time in 64-bit words (SWAR): portable, and far faster than a byte loop
// compilers fail to vectorize.
inline void unpack_nibbles(const std::uint8_t* qs, std::uint8_t* q) {
  constexpr std::uint64_t kLow = 0x0f0f0f0f0f0f0f0fULL;
  std::uint64_t w[2];
  std::memcpy(w, qs, 16);
  const std::uint64_t lo[2] = {w[0] & kLow, w[1] & kLow};
  const std::uint64_t hi[2] = {(w[0] >> 4) & kLow, (w[1] >> 4) & kLow};
  std::memcpy(q, lo, 16);
  std::memcpy(q + 16, hi, 16);
}

// Codes of a 5-bit block: the nibbles plus bit j of qh as bit 4 of element j.
inline void unpack_5bit(const std::uint8_t* qs, const std::uint8_t* qh_bytes, std::uint8_t* q) {
  unpack_nibbles(qs, q);
  const std::uint32_t qh = load_qh(qh_bytes);
  for (int j = 0; j < kQK; ++j) q[j] = static_cast<std::uint8_t>(q[j] | (((qh >> j) & 1u) << 4));
}

// Integer dot of 32 unsigned codes with 32 signed activation codes, and the activation sum
// (an offset code c - k then contributes sum(c*a) - k*sum(a), exactly).
inline int dot32u(const std::uint8_t* q, const std::int8_t* a) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += q[j] * a[j];
  return sum;
}
inline int sum32(const std::int8_t* a) {
  int sum = 0;
  for (int j = 0; j < kQK; ++j) sum += a[j];
  return sum;
}

}  // namespace

float dot_q4_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  std::uint8_t q[kQK];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    unpack_nibbles(x[b].qs, q);
    const int sumi = dot32u(q, y[b].qs) - 8 * sum32(y[b].qs);
    sum += static_cast<float>(sumi) * f16_to_f32(x[b].d) * f16_to_f32(y[b].d);
  }
  return sum;
}

float dot_q4_1(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  std::uint8_t q[kQK];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    unpack_nibbles(x[b].qs, q);
    const int sumi = dot32u(q, y[b].qs);
    // sum_j (d_x q_j + m_x) d_y a_j = d_x d_y sumi + m_x (d_y sum_j a_j) = ... + m_x s_y
    sum += (f16_to_f32(x[b].d) * f16_to_f32(y[b].d)) * static_cast<float>(sumi) +
           f16_to_f32(x[b].m) * f16_to_f32(y[b].s);
  }
  return sum;
}

float dot_q5_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  std::uint8_t q[kQK];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    unpack_5bit(x[b].qs, x[b].qh, q);
    const int sumi = dot32u(q, y[b].qs) - 16 * sum32(y[b].qs);
    sum += (f16_to_f32(x[b].d) * f16_to_f32(y[b].d)) * static_cast<float>(sumi);
  }
  return sum;
}

float dot_q5_1(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float sum = 0.0f;
  std::uint8_t q[kQK];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    unpack_5bit(x[b].qs, x[b].qh, q);
    const int sumi = dot32u(q, y[b].qs);
    sum += (f16_to_f32(x[b].d) * f16_to_f32(y[b].d)) * static_cast<float>(sumi) +
           f16_to_f32(x[b].m) * f16_to_f32(y[b].s);
  }
  return sum;
}

float dot_q8_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float sum = 0.0f;
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const int sumi = dot32(x[b].qs, y[b].qs);
    sum += static_cast<float>(sumi) * (f16_to_f32(x[b].d) * f16_to_f32(y[b].d));
  }
  return sum;
}

}  // namespace wisp::kernels::scalar
