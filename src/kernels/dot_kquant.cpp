// One-token dots of Q2_K, Q3_K and Q5_K against Q8_K activations in ggml's *generic* order (their
// x86 orders are not reproduced yet; Q4_K and Q6_K are, in dot_kquant_x86.cpp).
//
// Each super-block's codes are first unpacked to signed bytes in element order, then the integer
// products are summed, weighted by the sub-block scales, into 8 lanes (lane l takes the elements
// with index = l mod 8). The float part then follows ggml's generic code: the lanes are scaled and
// accumulated in 8 float partial sums, added together at the end; the mins term (Q5_K) goes into
// the main sum block by block.
#include <cstdint>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"

namespace wisp::kernels::scalar {

namespace {

constexpr int kLanes = 8;

// 6-bit scale and min of sub-block j of a Q4_K / Q5_K super-block (layout: block_layouts.h).
struct ScaleMin {
  int scale[8];
  int min[8];
};

ScaleMin unpack_scale_min(const std::uint8_t* s) {
  ScaleMin r{};
  for (int j = 0; j < 4; ++j) {
    r.scale[j] = s[j] & 0x3f;
    r.min[j] = s[j + 4] & 0x3f;
    r.scale[j + 4] = (s[j + 8] & 0x0f) | ((s[j] >> 6) << 4);
    r.min[j + 4] = (s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4);
  }
  return r;
}

// Signed 6-bit scales of a Q3_K super-block (stored biased by 32).
void unpack_q3_scales(const std::uint8_t* s, int out[16]) {
  for (int k = 0; k < 16; ++k) {
    const int low = k < 8 ? (s[k] & 0x0f) : (s[k - 8] >> 4);
    const int high = (s[8 + k % 4] >> (2 * (k / 4))) & 3;
    out[k] = (low | (high << 4)) - 32;
  }
}

// Adds scale * (q8 . a) over one sub-block of `len` elements (a multiple of 8) into the lanes.
inline void accumulate_lanes(int lanes[kLanes], int scale, const std::int8_t* q8, const std::int8_t* a, int len) {
  for (int i = 0; i < len; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += scale * (q8[i + l] * a[i + l]);
  }
}

// sums[l] += d * lanes[l]: the per-super-block float update of the generic code.
inline void add_lanes(float sums[kLanes], float d, const int lanes[kLanes]) {
  for (int l = 0; l < kLanes; ++l) sums[l] += d * static_cast<float>(lanes[l]);
}

inline float finish(float sum, const float sums[kLanes]) {
  for (int l = 0; l < kLanes; ++l) sum += sums[l];
  return sum;
}

}  // namespace

float dot_q2_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ2_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sum = 0.0f;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const BlockQ2_K& blk = x[b];
    int summs = 0;
    for (int j = 0; j < 16; ++j) summs += y[b].bsums[j] * (blk.scales[j] >> 4);
    // Element 128*c + 32*s + l is (qs[32*c + l] >> 2s) & 3; sub-block (16 values) = element / 16.
    int isum = 0;
    for (int c = 0; c < 2; ++c) {
      for (int s = 0; s < 4; ++s) {
        for (int half = 0; half < 2; ++half) {
          const int sub = 8 * c + 2 * s + half;
          int isuml = 0;
          for (int l = 16 * half; l < 16 * half + 16; ++l) {
            isuml += y[b].qs[128 * c + 32 * s + l] * ((blk.qs[32 * c + l] >> (2 * s)) & 3);
          }
          isum += (blk.scales[sub] & 0x0f) * isuml;
        }
      }
    }
    const float dall = y[b].d * f16_to_f32(blk.d);
    const float dmin = y[b].d * f16_to_f32(blk.dmin);
    sum += dall * static_cast<float>(isum) - dmin * static_cast<float>(summs);
  }
  return sum;
}

float dot_q3_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ3_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sums[kLanes] = {};
  std::int8_t q[kQK_K];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const BlockQ3_K& blk = x[b];
    // Element 128*c + 32*s + l: low bits (qs[32*c + l] >> 2s) & 3, minus 4 where hmask bit
    // (4c + s) of byte l is clear.
    for (int c = 0; c < 2; ++c) {
      for (int s = 0; s < 4; ++s) {
        const std::uint8_t m = static_cast<std::uint8_t>(1u << (4 * c + s));
        for (int l = 0; l < 32; ++l) {
          const int low = (blk.qs[32 * c + l] >> (2 * s)) & 3;
          q[128 * c + 32 * s + l] = static_cast<std::int8_t>(low - ((blk.hmask[l] & m) ? 0 : 4));
        }
      }
    }
    int scales[16];
    unpack_q3_scales(blk.scales, scales);
    int lanes[kLanes] = {};
    for (int sub = 0; sub < 16; ++sub) accumulate_lanes(lanes, scales[sub], y[b].qs + 16 * sub, q + 16 * sub, 16);
    add_lanes(sums, f16_to_f32(blk.d) * y[b].d, lanes);
  }
  return finish(0.0f, sums);
}

float dot_q5_k(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockQ5_K*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float sums[kLanes] = {};
  float sum = 0.0f;
  std::int8_t q[kQK_K];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const BlockQ5_K& blk = x[b];
    // Element 32*s + l takes bit s of qh[l] as its fifth bit.
    for (int c = 0; c < 4; ++c) {
      const std::uint8_t m_lo = static_cast<std::uint8_t>(1u << (2 * c));
      const std::uint8_t m_hi = static_cast<std::uint8_t>(1u << (2 * c + 1));
      for (int l = 0; l < 32; ++l) {
        q[64 * c + l] = static_cast<std::int8_t>((blk.qs[32 * c + l] & 0x0f) + ((blk.qh[l] & m_lo) ? 16 : 0));
        q[64 * c + 32 + l] = static_cast<std::int8_t>((blk.qs[32 * c + l] >> 4) + ((blk.qh[l] & m_hi) ? 16 : 0));
      }
    }
    const ScaleMin sm = unpack_scale_min(blk.scales);
    int summ = 0;
    for (int j = 0; j < 16; ++j) summ += y[b].bsums[j] * sm.min[j / 2];
    int lanes[kLanes] = {};
    for (int sub = 0; sub < 8; ++sub) accumulate_lanes(lanes, sm.scale[sub], y[b].qs + 32 * sub, q + 32 * sub, 32);
    add_lanes(sums, f16_to_f32(blk.d) * y[b].d, lanes);
    sum -= (f16_to_f32(blk.dmin) * y[b].d) * static_cast<float>(summ);
  }
  return finish(sum, sums);
}

}  // namespace wisp::kernels::scalar
