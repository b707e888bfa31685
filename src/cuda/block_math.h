// The per-block math of the CUDA backend, as inline functions both nvcc (device code) and g++
// (the host tests) compile: decoding a 32-value chunk of a weight row of any block type the
// backend runs, dequantizing it, quantizing a 32-value activation chunk to 8 bits, and the dot of
// a decoded weight chunk with a quantized activation chunk. Only thread mapping, shared memory and
// warp reductions are device-only (the .cu files), so everything here is tested on the host
// against the CPU references bit for bit (tests/unit/cuda/test_block_math.cpp).
//
// Rounding: every float operation whose result the tests pin is written as an explicit
// round-to-nearest multiply or add (hd_mul, hd_add), so nvcc cannot contract it into an FMA and
// the device computes the same bits as the host.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define WISP_HD __host__ __device__ __forceinline__
#else
#include "formats/half.h"
#define WISP_HD inline
#endif

namespace wisp::cuda {

// GGML type ids (formats/block_types.h's GgmlType; repeated here as plain constants so this
// header needs nothing nvcc cannot compile) and wisp's WQ ids (formats/wq_format.h).
namespace type_id {
inline constexpr std::uint32_t kF32 = 0, kF16 = 1, kQ4_0 = 2, kQ4_1 = 3, kQ5_0 = 6, kQ5_1 = 7, kQ8_0 = 8, kQ2_K = 10,
                               kQ3_K = 11, kQ4_K = 12, kQ5_K = 13, kQ6_K = 14, kBF16 = 30;
inline constexpr std::uint32_t kWqBase = 1000;  // 1000 + 10 * bits + {0, 1, 2} for groups {32, 64, 128}
}  // namespace type_id

inline constexpr int kChunk = 32;  // values per decoded chunk (and per activation block)

WISP_HD float hd_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
WISP_HD float hd_add(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
WISP_HD float hd_div(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}
WISP_HD float half_to_float(std::uint16_t h) {
#if defined(__CUDACC__)
  return __half2float(__ushort_as_half(h));  // exact, as the host's bit conversion
#else
  return f16_to_f32(h);
#endif
}
WISP_HD float bf16_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(static_cast<unsigned>(h) << 16);
#else
  const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}
WISP_HD std::uint16_t load_u16(const std::uint8_t* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }
WISP_HD float load_f32(const std::uint8_t* p) {
  const std::uint32_t bits = static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
                             (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

// A decoded chunk of 32 weights: value j = scale[j / 16] * q[j] (+ min[j / 16] when has_min), in
// that rounding, which is the reference dequantizer's for every type (formats/blocks/*.cpp). q
// holds the integer code minus the type's offset, so it is what the integer dot multiplies.
struct WeightChunk {
  std::int16_t q[kChunk];
  float scale[2];
  float min[2];
  bool has_min;
};

// ---- the block types, one decoder each -----------------------------------------------------------

WISP_HD int legacy_nibble(const std::uint8_t* qs, int j) { return j < 16 ? (qs[j] & 0x0f) : (qs[j - 16] >> 4); }
WISP_HD int legacy_high_bit(const std::uint8_t* qh, int j) { return (qh[j / 8] >> (j % 8)) & 1; }

WISP_HD void set_scale(WeightChunk& w, float s0, float s1) {
  w.scale[0] = s0;
  w.scale[1] = s1;
}

WISP_HD void decode_q4_0(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + c * 18;
  const float d = half_to_float(load_u16(b));
  for (int j = 0; j < kChunk; ++j) w.q[j] = static_cast<std::int16_t>(legacy_nibble(b + 2, j) - 8);
  set_scale(w, d, d);
  w.has_min = false;
}
WISP_HD void decode_q4_1(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + c * 20;
  const float d = half_to_float(load_u16(b));
  const float m = half_to_float(load_u16(b + 2));
  for (int j = 0; j < kChunk; ++j) w.q[j] = static_cast<std::int16_t>(legacy_nibble(b + 4, j));
  set_scale(w, d, d);
  w.min[0] = w.min[1] = m;
  w.has_min = true;
}
WISP_HD void decode_q5_0(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + c * 22;
  const float d = half_to_float(load_u16(b));
  for (int j = 0; j < kChunk; ++j) {
    w.q[j] = static_cast<std::int16_t>((legacy_nibble(b + 6, j) | (legacy_high_bit(b + 2, j) << 4)) - 16);
  }
  set_scale(w, d, d);
  w.has_min = false;
}
WISP_HD void decode_q5_1(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + c * 24;
  const float d = half_to_float(load_u16(b));
  const float m = half_to_float(load_u16(b + 2));
  for (int j = 0; j < kChunk; ++j) {
    w.q[j] = static_cast<std::int16_t>(legacy_nibble(b + 8, j) | (legacy_high_bit(b + 4, j) << 4));
  }
  set_scale(w, d, d);
  w.min[0] = w.min[1] = m;
  w.has_min = true;
}
WISP_HD void decode_q8_0(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + c * 34;
  const float d = half_to_float(load_u16(b));
  for (int j = 0; j < kChunk; ++j) w.q[j] = static_cast<std::int8_t>(b[2 + j]);
  set_scale(w, d, d);
  w.has_min = false;
}

// The K-quants: chunk c is 32-value piece c % 8 of super-block c / 8.
WISP_HD void decode_q2_k(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + (c / 8) * 84;
  const int sub = static_cast<int>(c % 8);
  const std::uint8_t* scales = b;
  const std::uint8_t* qs = b + 16;
  const float d = half_to_float(load_u16(b + 80));
  const float dmin = half_to_float(load_u16(b + 82));
  const int e0 = 32 * sub;
  const int half = e0 / 128, shift = 2 * ((e0 % 128) / 32);
  for (int l = 0; l < kChunk; ++l) w.q[l] = static_cast<std::int16_t>((qs[32 * half + l] >> shift) & 3);
  for (int h = 0; h < 2; ++h) {
    const std::uint8_t sc = scales[2 * sub + h];
    w.scale[h] = hd_mul(d, static_cast<float>(sc & 0x0f));
    w.min[h] = -hd_mul(dmin, static_cast<float>(sc >> 4));
  }
  w.has_min = true;
}
WISP_HD int q3_k_scale(const std::uint8_t* scales, int k) {
  const int lo = k < 8 ? (scales[k] & 0x0f) : (scales[k - 8] >> 4);
  const int hi = (scales[8 + k % 4] >> (2 * (k / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}
WISP_HD void decode_q3_k(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + (c / 8) * 110;
  const int sub = static_cast<int>(c % 8);
  const std::uint8_t* hmask = b;
  const std::uint8_t* qs = b + 32;
  const std::uint8_t* scales = b + 96;
  const float d = half_to_float(load_u16(b + 108));
  const int e0 = 32 * sub;
  const int half = e0 / 128, shift = 2 * ((e0 % 128) / 32);
  for (int l = 0; l < kChunk; ++l) {
    const int low = (qs[32 * half + l] >> shift) & 3;
    const int high_set = (hmask[l] >> sub) & 1;
    w.q[l] = static_cast<std::int16_t>(low - (high_set ? 0 : 4));
  }
  for (int h = 0; h < 2; ++h) w.scale[h] = hd_mul(d, static_cast<float>(q3_k_scale(scales, 2 * sub + h)));
  w.has_min = false;
}
// The 6-bit scale and min of sub-block j of Q4_K / Q5_K (formats/block_layouts.h).
WISP_HD void k_scale_min(const std::uint8_t* s, int j, int& sc, int& mn) {
  if (j < 4) {
    sc = s[j] & 0x3f;
    mn = s[j + 4] & 0x3f;
  } else {
    sc = (s[j + 4] & 0x0f) | ((s[j - 4] >> 2) & 0x30);
    mn = (s[j + 4] >> 4) | ((s[j] >> 2) & 0x30);
  }
}
WISP_HD void decode_q45_k(const std::uint8_t* b, int sub, const std::uint8_t* qh, WeightChunk& w) {
  const float d = half_to_float(load_u16(b));
  const float dmin = half_to_float(load_u16(b + 2));
  int sc = 0, mn = 0;
  k_scale_min(b + 4, sub, sc, mn);
  const std::uint8_t* qs = (qh ? b + 48 : b + 16) + 32 * (sub / 2);
  const int shift = 4 * (sub % 2);
  for (int l = 0; l < kChunk; ++l) {
    int q = (qs[l] >> shift) & 0x0f;
    if (qh) q |= ((qh[l] >> sub) & 1) << 4;
    w.q[l] = static_cast<std::int16_t>(q);
  }
  const float dl = hd_mul(d, static_cast<float>(sc));
  const float ml = hd_mul(dmin, static_cast<float>(mn));
  set_scale(w, dl, dl);
  w.min[0] = w.min[1] = -ml;
  w.has_min = true;
}
WISP_HD void decode_q4_k(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  decode_q45_k(row + (c / 8) * 144, static_cast<int>(c % 8), nullptr, w);
}
WISP_HD void decode_q5_k(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + (c / 8) * 176;
  decode_q45_k(b, static_cast<int>(c % 8), b + 16, w);
}
WISP_HD void decode_q6_k(const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  const std::uint8_t* b = row + (c / 8) * 210;
  const int sub = static_cast<int>(c % 8);
  const std::uint8_t* ql = b;
  const std::uint8_t* qh = b + 128;
  const auto* scales = reinterpret_cast<const std::int8_t*>(b + 192);
  const float d = half_to_float(load_u16(b + 208));
  for (int l = 0; l < kChunk; ++l) {
    const int e = 32 * sub + l;
    const int half = e / 128, r = e % 128;
    const int low = (ql[64 * half + r % 64] >> (4 * (r / 64))) & 0x0f;
    const int high = (qh[32 * half + r % 32] >> (2 * (r / 32))) & 3;
    w.q[l] = static_cast<std::int16_t>((low | (high << 4)) - 32);
  }
  for (int h = 0; h < 2; ++h) w.scale[h] = hd_mul(d, static_cast<float>(scales[2 * sub + h]));
  w.has_min = false;
}

// wisp's WQ types: b-bit codes in planes of 4, 2 or 1 bits (formats/FORMAT.md), value s * (q - z).
// Chunk c is values [32 c, 32 c + 32) of the row: part (32 c % g) / 32 of group 32 c / g.
WISP_HD void decode_wq(const std::uint8_t* row, std::int64_t c, int bits, int group, WeightChunk& w) {
  const std::int64_t block_bytes = 4 + bits * group / 8;
  const std::uint8_t* b = row + (c * kChunk / group) * block_bytes;
  const int first = static_cast<int>((c * kChunk) % group);
  const float s = half_to_float(load_u16(b));
  const int z = b[2];
  const std::uint8_t* planes = b + 4;
  int codes[kChunk];
  for (int l = 0; l < kChunk; ++l) codes[l] = 0;
  int shift = 0;
  for (int left = bits; left > 0;) {
    const int width = left == 8 ? 8 : left >= 4 ? 4 : (left >= 2 ? 2 : 1);  // one 8-bit plane, or 4, 2, 1
    const int per_byte = 8 / width;
    const int n_bytes = group / per_byte;  // byte j holds values j, j + n_bytes, ...
    const int mask = (1 << width) - 1;
    for (int l = 0; l < kChunk; ++l) {
      const int v = first + l;
      codes[l] |= ((planes[v % n_bytes] >> ((v / n_bytes) * width)) & mask) << shift;
    }
    planes += n_bytes;
    shift += width;
    left -= width;
  }
  for (int l = 0; l < kChunk; ++l) w.q[l] = static_cast<std::int16_t>(codes[l] - z);
  set_scale(w, s, s);
  w.has_min = false;
}

WISP_HD bool is_float_type(std::uint32_t t) { return t == type_id::kF32 || t == type_id::kF16 || t == type_id::kBF16; }

// Whether decode_chunk knows `type` (every GGML legacy and K-quant type and every WQ type).
WISP_HD bool is_quantized_type(std::uint32_t type) {
  switch (type) {
    case type_id::kQ4_0:
    case type_id::kQ4_1:
    case type_id::kQ5_0:
    case type_id::kQ5_1:
    case type_id::kQ8_0:
    case type_id::kQ2_K:
    case type_id::kQ3_K:
    case type_id::kQ4_K:
    case type_id::kQ5_K:
    case type_id::kQ6_K: return true;
    default: break;
  }
  if (type <= type_id::kWqBase || type >= type_id::kWqBase + 90) return false;
  const std::uint32_t bits = (type - type_id::kWqBase) / 10, g = (type - type_id::kWqBase) % 10;
  return ((bits >= 2 && bits <= 6) || bits == 8) && g <= 2;
}

// Decodes chunk c of a row of a quantized type; false for a type this header does not know
// (the float types are read with float_chunk instead).
WISP_HD bool decode_chunk(std::uint32_t type, const std::uint8_t* row, std::int64_t c, WeightChunk& w) {
  switch (type) {
    case type_id::kQ4_0: decode_q4_0(row, c, w); return true;
    case type_id::kQ4_1: decode_q4_1(row, c, w); return true;
    case type_id::kQ5_0: decode_q5_0(row, c, w); return true;
    case type_id::kQ5_1: decode_q5_1(row, c, w); return true;
    case type_id::kQ8_0: decode_q8_0(row, c, w); return true;
    case type_id::kQ2_K: decode_q2_k(row, c, w); return true;
    case type_id::kQ3_K: decode_q3_k(row, c, w); return true;
    case type_id::kQ4_K: decode_q4_k(row, c, w); return true;
    case type_id::kQ5_K: decode_q5_k(row, c, w); return true;
    case type_id::kQ6_K: decode_q6_k(row, c, w); return true;
    default: break;
  }
  if (type > type_id::kWqBase && type < type_id::kWqBase + 90) {
    const int bits = static_cast<int>((type - type_id::kWqBase) / 10);
    const int g = static_cast<int>((type - type_id::kWqBase) % 10);
    if ((bits >= 2 && bits <= 6) || bits == 8) {
      if (g <= 2) {
        decode_wq(row, c, bits, 32 << g, w);
        return true;
      }
    }
  }
  return false;
}

// Value j of a decoded chunk, in the reference dequantizer's rounding.
WISP_HD float chunk_value(const WeightChunk& w, int j) {
  const float v = hd_mul(w.scale[j / 16], static_cast<float>(w.q[j]));
  return w.has_min ? hd_add(v, w.min[j / 16]) : v;
}

// Values [32 c, 32 c + 32) of a row of a float type.
WISP_HD void float_chunk(std::uint32_t type, const std::uint8_t* row, std::int64_t c, float* out) {
  for (int j = 0; j < kChunk; ++j) {
    const std::int64_t i = c * kChunk + j;
    if (type == type_id::kF32) {
      out[j] = load_f32(row + 4 * i);
    } else if (type == type_id::kF16) {
      out[j] = half_to_float(load_u16(row + 2 * i));
    } else {
      out[j] = bf16_to_float(load_u16(row + 2 * i));
    }
  }
}

// ---- activations ----------------------------------------------------------------------------------

// 32 activation values as 8-bit codes: the CPU's Q8_0 activation quantizer's codes and (half) scale
// (kernels/act_quant.h: d = half(amax / 127), q = round-half-even(x * 127 / amax)), plus the code
// sums of each 16-value half for the weight types with a minimum.
struct ActChunk {
  std::int8_t q[kChunk];
  float d;
  std::int32_t sum[2];
};

WISP_HD float f32_to_half_value(float v) {
#if defined(__CUDACC__)
  return __half2float(__float2half_rn(v));
#else
  return f16_to_f32(f32_to_f16(v));
#endif
}
WISP_HD int round_half_even(float v) {
#if defined(__CUDA_ARCH__)
  return __float2int_rn(v);
#else
  return static_cast<int>(__builtin_nearbyintf(v));  // the default rounding mode: half to even
#endif
}

// The quantizer given the block's amax (the device computes amax with a warp reduction; max is
// exact in any order, so the host's loop gives the same value).
WISP_HD void quantize_act_value(float x, float amax, std::int8_t& q) {
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  q = static_cast<std::int8_t>(round_half_even(hd_mul(x, id)));
}
WISP_HD float act_scale(float amax) { return f32_to_half_value(amax / 127.0f); }

WISP_HD void quantize_act_chunk(const float* x, ActChunk& a) {
  float amax = 0.0f;
  for (int j = 0; j < kChunk; ++j) {
    const float m = x[j] < 0 ? -x[j] : x[j];
    amax = m > amax ? m : amax;
  }
  a.d = act_scale(amax);
  a.sum[0] = a.sum[1] = 0;
  for (int j = 0; j < kChunk; ++j) {
    quantize_act_value(x[j], amax, a.q[j]);
    a.sum[j / 16] += a.q[j];
  }
}

// ---- the dot of one chunk ---------------------------------------------------------------------------

// The exact integer dot of each 16-value half.
WISP_HD void chunk_isums(const WeightChunk& w, const ActChunk& a, std::int32_t isum[2]) {
  isum[0] = isum[1] = 0;
  for (int j = 0; j < kChunk; ++j) isum[j / 16] += static_cast<std::int32_t>(w.q[j]) * a.q[j];
}

// The float part of a chunk's dot given its exact integer half dots, in wisp's CUDA order: per
// half, (scale * d) * isum, plus (min * d) * code-sum for types with a minimum; the halves added in
// order. Both matmul kernels (the decode kernel's dp4a-style loop and the prefill kernel's tensor
// cores) call this one function, so their outputs are the same bits (cuda/mma_math.h). W: anything
// with WeightChunk's scale, min and has_min.
template <class W>
WISP_HD float chunk_dot_isums(const W& w, float d, const std::int32_t act_sum[2], const std::int32_t isum[2]) {
  float acc = 0.0f;
  for (int h = 0; h < 2; ++h) {
    acc = hd_add(acc, hd_mul(hd_mul(w.scale[h], d), static_cast<float>(isum[h])));
    if (w.has_min) acc = hd_add(acc, hd_mul(hd_mul(w.min[h], d), static_cast<float>(act_sum[h])));
  }
  return acc;
}

// sum_j value_j * (a.d * a.q[j]) in wisp's CUDA order (chunk_dot_isums over chunk_isums).
WISP_HD float chunk_dot(const WeightChunk& w, const ActChunk& a) {
  std::int32_t isum[2];
  chunk_isums(w, a, isum);
  return chunk_dot_isums(w, a.d, a.sum, isum);
}

// ---- the q8_0 KV cache ------------------------------------------------------------------------------

// A KV row in q8_0 (kv/kv_quant.cpp, GGML's reference quantize_row_q8_0): per 32 values, a half
// scale d = amax / 127 and codes round-half-away(x / d) (as x * (1 / d)); a value is d * code.
// The device's KV writes and attention reads use these, so they are the CPU pool's bytes and values.
inline constexpr int kKvQ8Bytes = 34;  // bytes per 32 values

WISP_HD std::uint16_t float_to_half_bits(float v) {
#if defined(__CUDACC__)
  return __half_as_ushort(__float2half_rn(v));
#else
  return f32_to_f16(v);
#endif
}
WISP_HD int round_half_away(float v) {
#if defined(__CUDA_ARCH__)
  return static_cast<int>(roundf(v));
#else
  return static_cast<int>(__builtin_lroundf(v));
#endif
}
// The scale of a group with maximum magnitude amax: its half bits, and the inverse the codes use.
WISP_HD std::uint16_t kv_q8_0_scale(float amax, float& inv) {
  const float d = hd_div(amax, 127.0f);
  inv = d != 0.0f ? hd_div(1.0f, d) : 0.0f;
  return float_to_half_bits(d);
}
WISP_HD std::int8_t kv_q8_0_code(float x, float inv) {
  return static_cast<std::int8_t>(round_half_away(hd_mul(x, inv)));
}
// Value d of a q8_0 row.
WISP_HD float kv_q8_0_value(const std::uint8_t* row, int d) {
  const std::uint8_t* g = row + (d / kChunk) * kKvQ8Bytes;
  return hd_mul(half_to_float(load_u16(g)), static_cast<float>(static_cast<std::int8_t>(g[2 + d % kChunk])));
}

}  // namespace wisp::cuda
