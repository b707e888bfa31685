// Dots of the 32-value block types against Q8_0 / Q8_1 activations, in the float order of ggml's
// x86 kernels (ggml_vec_dot_*_q8_* with AVX2, and tinyBLAS's Q0 GEMM, which agree): per block the
// 32 code products are summed exactly into 8 integer lanes of 4 consecutive elements; each lane is
// converted to float and accumulated as fma(d_x * d_y, lane, acc[lane]); the 8 accumulators are
// folded by hsum8 at the end. Q4_1/Q5_1 add their m * s terms in a separate running float sum.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/ggml_order.h"

namespace wisp::kernels::scalar {

namespace {

constexpr int kLanes = 8;

// The fifth bits of Q5_0/Q5_1: bit j of the little-endian 32-bit qh is bit 4 of element j.
inline std::uint32_t load_qh(const std::uint8_t* qh) {
  std::uint32_t v;
  std::memcpy(&v, qh, sizeof v);
  return v;
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

// lane[l] = sum of (q[j] - offset) * a[j] over j = 4l .. 4l+3, exactly. Written as a full
// 32-wide multiply then a fold of neighbours so compilers vectorize it.
template <typename Q>
inline void lane_sums(const Q* q, int offset, const std::int8_t* a, int lanes[kLanes]) {
  std::int32_t p[kQK];
  for (int j = 0; j < kQK; ++j) p[j] = (static_cast<std::int32_t>(q[j]) - offset) * a[j];
  for (int l = 0; l < kLanes; ++l) lanes[l] = (p[4 * l] + p[4 * l + 1]) + (p[4 * l + 2] + p[4 * l + 3]);
}

// acc[l] = fma(d, lane[l], acc[l]): the per-block update of the AVX2 kernels.
inline void accumulate(float acc[kLanes], float d, const int lanes[kLanes]) {
  for (int l = 0; l < kLanes; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
}

}  // namespace

float dot_q4_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc[kLanes] = {};
  std::uint8_t q[kQK];
  int lanes[kLanes];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    unpack_nibbles(x[b].qs, q);
    lane_sums(q, 8, y[b].qs, lanes);
    accumulate(acc, f16_to_f32(x[b].d) * f16_to_f32(y[b].d), lanes);
  }
  return ggml::hsum8(acc);
}

// Q4_0 weights ggml repacks at load (rows % 8 == 0): its gemv/gemm keep one accumulator per
// output and add each block as fma(sum, d_x * d_y, acc).
float dot_q4_0_repacked(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc = 0.0f;
  std::uint8_t q[kQK];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    unpack_nibbles(x[b].qs, q);
    int sum = 0;
    for (int j = 0; j < kQK; ++j) sum += (q[j] - 8) * y[b].qs[j];
    acc = std::fma(static_cast<float>(sum), f16_to_f32(x[b].d) * f16_to_f32(y[b].d), acc);
  }
  return acc;
}

float dot_q4_1(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ4_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float acc[kLanes] = {};
  float summs = 0.0f;
  std::uint8_t q[kQK];
  int lanes[kLanes];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    // sum_j (d_x q_j + m_x) d_y a_j = d_x d_y sum_j q_j a_j + m_x s_y (s_y = d_y sum_j a_j).
    summs = std::fma(f16_to_f32(x[b].m), f16_to_f32(y[b].s), summs);
    unpack_nibbles(x[b].qs, q);
    lane_sums(q, 0, y[b].qs, lanes);
    accumulate(acc, f16_to_f32(x[b].d) * f16_to_f32(y[b].d), lanes);
  }
  return ggml::hsum8(acc) + summs;
}

float dot_q5_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc[kLanes] = {};
  std::uint8_t q[kQK];
  int lanes[kLanes];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    unpack_5bit(x[b].qs, x[b].qh, q);
    lane_sums(q, 16, y[b].qs, lanes);
    accumulate(acc, f16_to_f32(x[b].d) * f16_to_f32(y[b].d), lanes);
  }
  return ggml::hsum8(acc);
}

float dot_q5_1(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_1*>(w);
  const auto* y = static_cast<const BlockQ8_1*>(a);
  float acc[kLanes] = {};
  float summs = 0.0f;
  std::uint8_t q[kQK];
  int lanes[kLanes];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    summs = std::fma(f16_to_f32(x[b].m), f16_to_f32(y[b].s), summs);
    unpack_5bit(x[b].qs, x[b].qh, q);
    lane_sums(q, 0, y[b].qs, lanes);
    accumulate(acc, f16_to_f32(x[b].d) * f16_to_f32(y[b].d), lanes);
  }
  return ggml::hsum8(acc) + summs;
}

float dot_q8_0(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ8_0*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc[kLanes] = {};
  int lanes[kLanes];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    lane_sums(x[b].qs, 0, y[b].qs, lanes);
    accumulate(acc, f16_to_f32(x[b].d) * f16_to_f32(y[b].d), lanes);
  }
  return ggml::hsum8(acc);
}

}  // namespace wisp::kernels::scalar
