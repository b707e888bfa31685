// One K-quant super-block (256 values) unpacked to integers: signed codes in element order and
// the integer scale (and min) of each sub-block, so that
//   value[e] = d * scale[sub(e)] * q[e] - dmin * min[sub(e)],   sub(e) = e / sub_len.
// The codes absorb each type's offset (Q3_K's -4, Q6_K's -32), so integer dots with activation
// codes are exact whatever order a kernel later sums them in.
#pragma once

#include <cstdint>
#include <cstring>

#include "formats/block_layouts.h"
#include "formats/half.h"

namespace wisp::kernels {

struct KBlock {
  int sub_len = 16;  // 16 (Q2_K, Q3_K, Q6_K) or 32 (Q4_K, Q5_K)
  int scale[16] = {};
  int min[16] = {};
  float d = 0.0f;
  float dmin = 0.0f;  // 0 for the types without mins
  std::int8_t q[kQK_K];
};

// Q4_K / Q5_K 6-bit scales and mins (layout in formats/block_layouts.h).
inline void unpack_k_scale_min(const std::uint8_t* s, int scale[8], int min[8]) {
  for (int j = 0; j < 4; ++j) {
    scale[j] = s[j] & 0x3f;
    min[j] = s[j + 4] & 0x3f;
    scale[j + 4] = (s[j + 8] & 0x0f) | ((s[j] >> 6) << 4);
    min[j + 4] = (s[j + 8] >> 4) | ((s[j + 4] >> 6) << 4);
  }
}

inline void unpack_kblock(const BlockQ2_K& b, KBlock& k) {
  k.sub_len = 16;
  for (int i = 0; i < 16; ++i) {
    k.scale[i] = b.scales[i] & 0x0f;
    k.min[i] = b.scales[i] >> 4;
  }
  k.d = f16_to_f32(b.d);
  k.dmin = f16_to_f32(b.dmin);
  for (int c = 0; c < 2; ++c)
    for (int s = 0; s < 4; ++s)
      for (int l = 0; l < 32; ++l)
        k.q[128 * c + 32 * s + l] = static_cast<std::int8_t>((b.qs[32 * c + l] >> (2 * s)) & 3);
}

inline void unpack_kblock(const BlockQ3_K& b, KBlock& k) {
  k.sub_len = 16;
  for (int i = 0; i < 16; ++i) {
    const int low = i < 8 ? (b.scales[i] & 0x0f) : (b.scales[i - 8] >> 4);
    const int high = (b.scales[8 + i % 4] >> (2 * (i / 4))) & 3;
    k.scale[i] = (low | (high << 4)) - 32;
    k.min[i] = 0;
  }
  k.d = f16_to_f32(b.d);
  k.dmin = 0.0f;
  for (int c = 0; c < 2; ++c)
    for (int s = 0; s < 4; ++s) {
      const int m = 1 << (4 * c + s);
      for (int l = 0; l < 32; ++l) {
        const int low = (b.qs[32 * c + l] >> (2 * s)) & 3;
        k.q[128 * c + 32 * s + l] = static_cast<std::int8_t>(low - ((b.hmask[l] & m) ? 0 : 4));
      }
    }
}

inline void unpack_kblock(const BlockQ4_K& b, KBlock& k) {
  k.sub_len = 32;
  unpack_k_scale_min(b.scales, k.scale, k.min);
  k.d = f16_to_f32(b.d);
  k.dmin = f16_to_f32(b.dmin);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      k.q[64 * c + l] = static_cast<std::int8_t>(b.qs[32 * c + l] & 0x0f);
      k.q[64 * c + 32 + l] = static_cast<std::int8_t>(b.qs[32 * c + l] >> 4);
    }
}

inline void unpack_kblock(const BlockQ5_K& b, KBlock& k) {
  k.sub_len = 32;
  unpack_k_scale_min(b.scales, k.scale, k.min);
  k.d = f16_to_f32(b.d);
  k.dmin = f16_to_f32(b.dmin);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      const int lo = (b.qh[l] >> (2 * c)) & 1, hi = (b.qh[l] >> (2 * c + 1)) & 1;
      k.q[64 * c + l] = static_cast<std::int8_t>((b.qs[32 * c + l] & 0x0f) | (lo << 4));
      k.q[64 * c + 32 + l] = static_cast<std::int8_t>((b.qs[32 * c + l] >> 4) | (hi << 4));
    }
}

inline void unpack_kblock(const BlockQ6_K& b, KBlock& k) {
  k.sub_len = 16;
  for (int i = 0; i < 16; ++i) {
    k.scale[i] = b.scales[i];
    k.min[i] = 0;
  }
  k.d = f16_to_f32(b.d);
  k.dmin = 0.0f;
  for (int c = 0; c < 2; ++c) {
    const std::uint8_t* ql = b.ql + 64 * c;
    const std::uint8_t* qh = b.qh + 32 * c;
    std::int8_t* out = k.q + 128 * c;
    for (int l = 0; l < 32; ++l) {
      out[l] = static_cast<std::int8_t>(((ql[l] & 0x0f) | (((qh[l] >> 0) & 3) << 4)) - 32);
      out[l + 32] = static_cast<std::int8_t>(((ql[l + 32] & 0x0f) | (((qh[l] >> 2) & 3) << 4)) - 32);
      out[l + 64] = static_cast<std::int8_t>(((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
      out[l + 96] = static_cast<std::int8_t>(((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
    }
  }
}

// Exact super-block integers: s1 = sum over sub-blocks of scale * (q . a), s2 = sum of min * (sum of a).
struct KSums {
  std::int64_t s1 = 0;
  std::int64_t s2 = 0;
};

inline KSums ksums(const KBlock& k, const std::int8_t* a) {
  KSums r;
  for (int s = 0; s < kQK_K / k.sub_len; ++s) {
    std::int64_t dot = 0, asum = 0;
    for (int e = s * k.sub_len; e < (s + 1) * k.sub_len; ++e) {
      dot += k.q[e] * a[e];
      asum += a[e];
    }
    r.s1 += k.scale[s] * dot;
    r.s2 += k.min[s] * asum;
  }
  return r;
}

}  // namespace wisp::kernels
