// Dots of the codebook and ternary types (IQ4_NL, IQ4_XS, MXFP4, NVFP4, TQ1_0, TQ2_0) in the float orders
// of llama.cpp's x86-64 CPU backend (see ggml_order.h). Every integer part is exact; what the
// functions pin is where the floats are rounded:
//   - IQ4_NL, MXFP4 (Q8_0 activations), one token: ggml_vec_dot_*_q8_0 (AVX2) takes blocks in
//     pairs, 8 integer lanes of 4 consecutive values each; even blocks FMA into one 8-lane
//     accumulator, odd blocks into another, folded as hsum8(acc_even + acc_odd). An odd last block
//     is added after the fold as one scalar FMA (ggml's C tail, which its compiler contracts).
//   - IQ4_NL, batches: tinyBLAS, one 8-lane accumulator per output (Q4_0's order with the codebook).
//   - IQ4_NL and MXFP4 repacked (rows % 8 == 0): the Q4_0 GEMV/GEMM with the codebook (one
//     template in ggml for the three), one scalar accumulator per output,
//     acc = fma(float(block sum), d_x * d_y, acc).
//   - IQ4_XS (Q8_K), one token: per super-block 8 integer lanes (lane l: values 4l..4l+3 of every
//     32-value sub-block times its scale), acc = fma(d_x * d_y, lane, acc), hsum8. Batches of 8+:
//     the tiled GEMM, one exact sum per super-block, acc = fma(d_x * sum, d_y, acc).
//   - TQ1_0, TQ2_0 (Q8_K): 8 integer lanes from 16-bit sums of the unsigned codes {0, 1, 2} less the
//     16-value activation sums (bsums[2l] + bsums[2l + 1] in lane l), acc = fma(lane, d_y * d_x,
//     acc), hsum8 (ggml writes a multiply and an add, which its compiler contracts into one FMA:
//     the goldens match the fused form).
#include <cmath>
#include <cstdint>

#include "formats/block_layouts.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/ggml_order.h"

namespace wisp::kernels::scalar {

namespace {

// Codebook values of a 32-value nibble block (Q4_0's element order).
inline void lut_nibbles(const std::uint8_t* qs, const std::int8_t* lut, int v[32]) {
  for (int j = 0; j < 16; ++j) {
    v[j] = lut[qs[j] & 0x0f];
    v[j + 16] = lut[qs[j] >> 4];
  }
}

// lane[l] = sum of v[j] * a[j] over j = 4l .. 4l + 3 (exact).
inline void lanes4(const int v[32], const std::int8_t* a, int lanes[8]) {
  for (int l = 0; l < 8; ++l) {
    lanes[l] =
        v[4 * l] * a[4 * l] + v[4 * l + 1] * a[4 * l + 1] + v[4 * l + 2] * a[4 * l + 2] + v[4 * l + 3] * a[4 * l + 3];
  }
}

inline int block_sum(const int v[32], const std::int8_t* a) {
  int s = 0;
  for (int j = 0; j < 32; ++j) s += v[j] * a[j];
  return s;
}

// The 32-value codebook types share ggml's loops; only the block scale differs.
inline float iq4_nl_scale(const BlockIQ4_NL& x) { return f16_to_f32(x.d); }
inline float mxfp4_scale(const BlockMXFP4& x) { return e8m0_to_f32_half(x.e); }

template <typename Block, const std::int8_t* Lut, float (*Scale)(const Block&)>
float pairs_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const std::int64_t nb = n / kQK;
  float acc[2][8] = {};
  int v[32], lanes[8];
  std::int64_t b = 0;
  for (; b + 1 < nb; b += 2) {
    for (int k = 0; k < 2; ++k) {
      lut_nibbles(x[b + k].qs, Lut, v);
      lanes4(v, y[b + k].qs, lanes);
      const float d = f16_to_f32(y[b + k].d) * Scale(x[b + k]);
      for (int l = 0; l < 8; ++l) acc[k][l] = std::fma(d, static_cast<float>(lanes[l]), acc[k][l]);
    }
  }
  float folded[8];
  for (int l = 0; l < 8; ++l) folded[l] = acc[0][l] + acc[1][l];
  float sum = ggml::hsum8(folded);
  for (; b < nb; ++b) {
    lut_nibbles(x[b].qs, Lut, v);
    const float d = f16_to_f32(y[b].d) * Scale(x[b]);
    sum = std::fma(d, static_cast<float>(block_sum(v, y[b].qs)), sum);
  }
  return sum;
}

template <typename Block, const std::int8_t* Lut, float (*Scale)(const Block&)>
float single_acc_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc[8] = {};
  int v[32], lanes[8];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    lut_nibbles(x[b].qs, Lut, v);
    lanes4(v, y[b].qs, lanes);
    const float d = Scale(x[b]) * f16_to_f32(y[b].d);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return ggml::hsum8(acc);
}

template <typename Block, const std::int8_t* Lut, float (*Scale)(const Block&)>
float repacked_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc = 0.0f;
  int v[32];
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    lut_nibbles(x[b].qs, Lut, v);
    acc = std::fma(static_cast<float>(block_sum(v, y[b].qs)), Scale(x[b]) * f16_to_f32(y[b].d), acc);
  }
  return acc;
}

// IQ4_XS sub-block s's scale (biased by 32 in the file).
inline int iq4_xs_scale(const BlockIQ4_XS& x, int s) {
  return (((x.scales_l[s / 2] >> (4 * (s % 2))) & 0x0f) | (((x.scales_h >> (2 * s)) & 3) << 4)) - 32;
}

// IQ4_XS's exact integer lanes of one super-block (see the file comment).
inline void iq4_xs_lanes(const BlockIQ4_XS& x, const std::int8_t* a, int lanes[8]) {
  for (int l = 0; l < 8; ++l) lanes[l] = 0;
  int v[32], part[8];
  for (int s = 0; s < 8; ++s) {
    lut_nibbles(x.qs + 16 * s, kIq4NlValues, v);
    lanes4(v, a + 32 * s, part);
    const int sc = iq4_xs_scale(x, s);
    for (int l = 0; l < 8; ++l) lanes[l] += sc * part[l];
  }
}

// TQ lanes: lane l sums code * a over values 4l .. 4l + 3 of every 32-value chunk (codes are the
// unsigned 0..2, i.e. trit + 1), less the activation sums of values 32l .. 32l + 31, which is how
// ggml removes the +1 (exact either way; the lane split is what the float order sees).
inline void tq_lanes(const std::uint8_t codes[kQK_K], const BlockQ8_K& y, int lanes[8]) {
  for (int l = 0; l < 8; ++l) {
    int s = 0;
    for (int c = 0; c < 8; ++c) {
      for (int e = 32 * c + 4 * l; e < 32 * c + 4 * l + 4; ++e) s += codes[e] * y.qs[e];
    }
    lanes[l] = s - y.bsums[2 * l] - y.bsums[2 * l + 1];
  }
}

inline void tq1_codes(const BlockTQ1_0& x, std::uint8_t codes[kQK_K]) {
  static constexpr std::uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  auto trit = [](std::uint8_t byte, int p) {
    return static_cast<std::uint8_t>((static_cast<std::uint8_t>(byte * kPow3[p]) * 3) >> 8);
  };
  for (int p = 0; p < 5; ++p) {
    for (int j = 0; j < 32; ++j) codes[32 * p + j] = trit(x.qs[j], p);
    for (int j = 0; j < 16; ++j) codes[160 + 16 * p + j] = trit(x.qs[32 + j], p);
  }
  for (int p = 0; p < 4; ++p) {
    for (int j = 0; j < 4; ++j) codes[240 + 4 * p + j] = trit(x.qh[j], p);
  }
}

inline void tq2_codes(const BlockTQ2_0& x, std::uint8_t codes[kQK_K]) {
  for (int c = 0; c < 2; ++c)
    for (int s = 0; s < 4; ++s)
      for (int j = 0; j < 32; ++j) codes[128 * c + 32 * s + j] = (x.qs[32 * c + j] >> (2 * s)) & 3;
}

template <typename Block, void (*Codes)(const Block&, std::uint8_t*)>
float tq_dot(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc[8] = {};
  std::uint8_t codes[kQK_K];
  int lanes[8];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    Codes(x[b], codes);
    tq_lanes(codes, y[b], lanes);
    const float d = y[b].d * f16_to_f32(x[b].d);
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(static_cast<float>(lanes[l]), d, acc[l]);
  }
  return ggml::hsum8(acc);
}

}  // namespace

float dot_iq4_nl(const void* w, const void* a, std::int64_t n) {
  return pairs_dot<BlockIQ4_NL, kIq4NlValues, iq4_nl_scale>(w, a, n);
}
float dot_iq4_nl_batched(const void* w, const void* a, std::int64_t n) {
  return single_acc_dot<BlockIQ4_NL, kIq4NlValues, iq4_nl_scale>(w, a, n);
}
float dot_iq4_nl_repacked(const void* w, const void* a, std::int64_t n) {
  return repacked_dot<BlockIQ4_NL, kIq4NlValues, iq4_nl_scale>(w, a, n);
}
float dot_mxfp4(const void* w, const void* a, std::int64_t n) {
  return pairs_dot<BlockMXFP4, kMxfp4Values, mxfp4_scale>(w, a, n);
}
float dot_mxfp4_repacked(const void* w, const void* a, std::int64_t n) {
  return repacked_dot<BlockMXFP4, kMxfp4Values, mxfp4_scale>(w, a, n);
}

// NVFP4 (Q8_0 activations, two per 64-value block): ggml_vec_dot_nvfp4_q8_0 (AVX2) keeps one
// 8-lane accumulator. Per block, lanes 0-3 hold values 4l..4l+3 of sub-block 0 and lanes 4-7 those
// of sub-block 1 (against activation block 2b), then the same for sub-blocks 2 and 3 (block 2b+1);
// each lane adds fma(ue4m3(d[s]) * d_y, lane, acc), first half then second; hsum8 at the end.
float dot_nvfp4(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockNVFP4*>(w);
  const auto* y = static_cast<const BlockQ8_0*>(a);
  float acc[8] = {};
  for (std::int64_t b = 0; b < n / kQK_NVFP4; ++b) {
    for (int half = 0; half < 2; ++half) {
      const BlockQ8_0& yb = y[2 * b + half];
      const float dy = f16_to_f32(yb.d);
      for (int l = 0; l < 8; ++l) {
        const int s = 2 * half + l / 4;  // the sub-block of lane l
        const std::uint8_t* qs = x[b].qs + s * (kQK_NVFP4_Sub / 2);
        int lane = 0;
        for (int i = 4 * (l % 4); i < 4 * (l % 4) + 4; ++i) {  // value i of sub-block s
          const int q = i < 8 ? qs[i] & 0x0f : qs[i - 8] >> 4;
          lane += kMxfp4Values[q] * yb.qs[16 * (l / 4) + i];
        }
        acc[l] = std::fma(ue4m3_to_f32_half(x[b].d[s]) * dy, static_cast<float>(lane), acc[l]);
      }
    }
  }
  return ggml::hsum8(acc);
}

float dot_iq4_xs(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc[8] = {};
  int lanes[8];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    iq4_xs_lanes(x[b], y[b].qs, lanes);
    const float d = f16_to_f32(x[b].d) * y[b].d;
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(lanes[l]), acc[l]);
  }
  return ggml::hsum8(acc);
}

float dot_iq4_xs_tiled(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const BlockIQ4_XS*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc = 0.0f;
  int lanes[8];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    iq4_xs_lanes(x[b], y[b].qs, lanes);
    int s = 0;
    for (int l = 0; l < 8; ++l) s += lanes[l];
    const float r = f16_to_f32(x[b].d) * static_cast<float>(s);
    acc = std::fma(r, y[b].d, acc);
  }
  return acc;
}

float dot_tq1_0(const void* w, const void* a, std::int64_t n) { return tq_dot<BlockTQ1_0, tq1_codes>(w, a, n); }
float dot_tq2_0(const void* w, const void* a, std::int64_t n) { return tq_dot<BlockTQ2_0, tq2_codes>(w, a, n); }

}  // namespace wisp::kernels::scalar
