// The x86 bodies of the multi-output dots (kernels/multi_dots.h), compiled per ISA like the
// one-row kernels they reproduce (legacy_dots.h): per output, the same exact integer lanes per
// block, the same scale products and the same FMA chains in block order. Only the interleaving
// across outputs differs, which changes no output's arithmetic.
#pragma once

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "kernels/act_quant.h"
#include "kernels/multi_dots.h"
#include "kernels/x86/blocks8_dots-inl.h"
#include "kernels/x86/blocks8_gemm-inl.h"
#include "kernels/x86/blocks8_gemm16-inl.h"
#include "kernels/x86/kquant_dots-inl.h"
#include "kernels/x86/legacy_dots-inl.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// How each legacy type turns one weight block and one activation block into the 8 int32 lanes
// of legacy_dots.h. `prep` is the weight-only part (unpacked codes), shared by the four outputs.
// For the 4x4 tiles, the activation-only part of a block's lanes is computed once per token and
// shared by the four weight rows: the loaded codes and, for the offset types, the offset's products
// (exact integers; lanes = codes . a - offset . a as in dot4_offset).
struct ActPart {
  __m256i a;
  __m256i off;  // VNNI: offset . a in int32 lanes; AVX2: maddubs(offset, a) in int16 pairs
};

inline ActPart offset_part(const std::int8_t* qs, int offset) {
  const __m256i a = load32(qs);
  const __m256i off = _mm256_set1_epi8(static_cast<char>(offset));
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return {a, _mm256_dpbusd_epi32(_mm256_setzero_si256(), off, a)};
#else
  return {a, _mm256_maddubs_epi16(off, a)};
#endif
}

inline __m256i offset_lanes(__m256i q, const ActPart& p) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_sub_epi32(_mm256_dpbusd_epi32(_mm256_setzero_si256(), q, p.a), p.off);
#else
  return _mm256_madd_epi16(_mm256_sub_epi16(_mm256_maddubs_epi16(q, p.a), p.off), _mm256_set1_epi16(1));
#endif
}

struct Q4_0Ops {
  using W = BlockQ4_0;
  using A = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static __m256i prep(const W& x) { return unpack_nibbles(x.qs); }
  static __m256i lanes(__m256i q, const A& y) { return dot4_offset(q, 8, load32(y.qs)); }
  static ActPart act(const A& y) { return offset_part(y.qs, 8); }
  static __m256i lanes(__m256i q, const ActPart& p) { return offset_lanes(q, p); }
};
struct Q4_1Ops {
  using W = BlockQ4_1;
  using A = BlockQ8_1;
  static constexpr bool kHasMin = true;
  static __m256i prep(const W& x) { return unpack_nibbles(x.qs); }
  static __m256i lanes(__m256i q, const A& y) { return dot4_u8s8(q, load32(y.qs)); }
  static ActPart act(const A& y) { return {load32(y.qs), _mm256_setzero_si256()}; }
  static __m256i lanes(__m256i q, const ActPart& p) { return dot4_u8s8(q, p.a); }
};
struct Q5_0Ops {
  using W = BlockQ5_0;
  using A = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static __m256i prep(const W& x) { return q5_codes(x.qs, x.qh); }
  static __m256i lanes(__m256i q, const A& y) { return dot4_offset(q, 16, load32(y.qs)); }
  static ActPart act(const A& y) { return offset_part(y.qs, 16); }
  static __m256i lanes(__m256i q, const ActPart& p) { return offset_lanes(q, p); }
};
struct Q5_1Ops {
  using W = BlockQ5_1;
  using A = BlockQ8_1;
  static constexpr bool kHasMin = true;
  static __m256i prep(const W& x) { return q5_codes(x.qs, x.qh); }
  static __m256i lanes(__m256i q, const A& y) { return dot4_u8s8(q, load32(y.qs)); }
  static ActPart act(const A& y) { return {load32(y.qs), _mm256_setzero_si256()}; }
  static __m256i lanes(__m256i q, const ActPart& p) { return dot4_u8s8(q, p.a); }
};
struct Q8_0Ops {
  using W = BlockQ8_0;
  using A = BlockQ8_0;
  static constexpr bool kHasMin = false;
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  // dot4_s8s8's VNNI form: (x + 128) . y - 128 . sum(y); the first factor is weight-only, the
  // second activation-only.
  static __m256i prep(const W& x) { return _mm256_xor_si256(load32(x.qs), _mm256_set1_epi8(static_cast<char>(0x80))); }
  static __m256i lanes(__m256i q, const A& y) { return lanes(q, act(y)); }
  static ActPart act(const A& y) { return offset_part(y.qs, 0x80); }
  static __m256i lanes(__m256i q, const ActPart& p) { return offset_lanes(q, p); }
#else
  static const std::int8_t* prep(const W& x) { return x.qs; }
  static __m256i lanes(const std::int8_t* q, const A& y) { return dot4_s8s8(q, y.qs); }
#endif
};

template <class T>
const typename T::A* act_row(const void* a, std::size_t stride, int j) {
  return reinterpret_cast<const typename T::A*>(static_cast<const std::uint8_t*>(a) +
                                                stride * static_cast<std::size_t>(j));
}
template <class T>
const typename T::W* weight_row(const void* w, std::size_t stride, int j) {
  return reinterpret_cast<const typename T::W*>(static_cast<const std::uint8_t*>(w) +
                                                stride * static_cast<std::size_t>(j));
}

// Four halves to four floats in one conversion (exact, as h2f).
inline __m128 h2f4(std::uint16_t h0, std::uint16_t h1, std::uint16_t h2, std::uint16_t h3) {
  return _mm_cvtph_ps(_mm_setr_epi16(static_cast<short>(h0), static_cast<short>(h1), static_cast<short>(h2),
                                     static_cast<short>(h3), 0, 0, 0, 0));
}

// Lane j of a float4 in all 8 lanes.
template <int J>
inline __m256 lane(__m128 v) {
  return _mm256_broadcastss_ps(_mm_permute_ps(v, J * 0x55));
}

// The exact sums of the 8 int32 lanes of each of four vectors, as one int4 (integer addition, so
// any order gives the same values as hsum_i32).
inline __m128i hsum4_i32(__m256i a, __m256i b, __m256i c, __m256i d) {
  const __m256i h = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
  return _mm_add_epi32(_mm256_castsi256_si128(h), _mm256_extracti128_si256(h, 1));
}

// The 8-lane order of dot_q4_0 .. dot_q8_0: acc = fma(d_x * d_y, lanes, acc) per block, hsum8,
// plus the chain of m_x * s_y for the types with a minimum. The four outputs' scale products
// and minimum chains are computed as the four lanes of one float4 (the same IEEE operations per
// lane), then each lane is broadcast to its output's 8-lane FMA.
template <class T>
inline void fma4(const __m256i (&l)[4], __m128 scale, __m256 (&acc)[4]) {
  acc[0] = _mm256_fmadd_ps(lane<0>(scale), _mm256_cvtepi32_ps(l[0]), acc[0]);
  acc[1] = _mm256_fmadd_ps(lane<1>(scale), _mm256_cvtepi32_ps(l[1]), acc[1]);
  acc[2] = _mm256_fmadd_ps(lane<2>(scale), _mm256_cvtepi32_ps(l[2]), acc[2]);
  acc[3] = _mm256_fmadd_ps(lane<3>(scale), _mm256_cvtepi32_ps(l[3]), acc[3]);
}

template <class T>
inline void finish4(const __m256 (&acc)[4], __m128 summs, float* out) {
  alignas(16) float m[4];
  _mm_store_ps(m, summs);
  for (int j = 0; j < 4; ++j) out[j] = T::kHasMin ? hsum8(acc[j]) + m[j] : hsum8(acc[j]);
}

template <class T>
void tok4_lanes(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  const auto* x = static_cast<const typename T::W*>(w);
  const typename T::A* y[4];
  for (int j = 0; j < 4; ++j) y[j] = act_row<T>(a, a_stride, j);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  __m128 summs = _mm_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const auto q = T::prep(x[b]);
    const __m128 dy = h2f4(y[0][b].d, y[1][b].d, y[2][b].d, y[3][b].d);
    if constexpr (T::kHasMin) {
      const __m128 sy = h2f4(y[0][b].s, y[1][b].s, y[2][b].s, y[3][b].s);
      summs = _mm_fmadd_ps(_mm_set1_ps(h2f(x[b].m)), sy, summs);
    }
    const __m256i l[4] = {T::lanes(q, y[0][b]), T::lanes(q, y[1][b]), T::lanes(q, y[2][b]), T::lanes(q, y[3][b])};
    fma4<T>(l, _mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), dy), acc);
  }
  finish4<T>(acc, summs, out);
}

// Whether T splits its lanes into a weight part and an activation part (ActPart) that four rows
// can share.
template <class T>
concept HasActPart = requires(const typename T::A& y) {
  T::act(y);
};

template <class T>
void row4_lanes(const void* w, std::size_t w_stride, const void* a, std::int64_t n, float* out) {
  const auto* y = static_cast<const typename T::A*>(a);
  const typename T::W* x[4];
  for (int j = 0; j < 4; ++j) x[j] = weight_row<T>(w, w_stride, j);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  __m128 summs = _mm_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const __m128 dx = h2f4(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
    if constexpr (T::kHasMin) {
      const __m128 mx = h2f4(x[0][b].m, x[1][b].m, x[2][b].m, x[3][b].m);
      summs = _mm_fmadd_ps(mx, _mm_set1_ps(h2f(y[b].s)), summs);
    }
    if constexpr (HasActPart<T>) {
      const ActPart p = T::act(y[b]);
      const __m256i l[4] = {T::lanes(T::prep(x[0][b]), p), T::lanes(T::prep(x[1][b]), p), T::lanes(T::prep(x[2][b]), p),
                            T::lanes(T::prep(x[3][b]), p)};
      fma4<T>(l, _mm_mul_ps(dx, _mm_set1_ps(h2f(y[b].d))), acc);
    } else {
      const __m256i l[4] = {T::lanes(T::prep(x[0][b]), y[b]), T::lanes(T::prep(x[1][b]), y[b]),
                            T::lanes(T::prep(x[2][b]), y[b]), T::lanes(T::prep(x[3][b]), y[b])};
      fma4<T>(l, _mm_mul_ps(dx, _mm_set1_ps(h2f(y[b].d))), acc);
    }
  }
  finish4<T>(acc, summs, out);
}

// dot_q4_0_repacked's order: per block the exact integer sum, acc = fma(sum, d_x * d_y, acc);
// the four outputs' chains are the four lanes of one float4.
void tok4_q4_0_repacked(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  const auto* x = static_cast<const BlockQ4_0*>(w);
  const BlockQ8_0* y[4];
  for (int j = 0; j < 4; ++j) y[j] = act_row<Q4_0Ops>(a, a_stride, j);
  __m128 acc = _mm_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const __m256i q = unpack_nibbles(x[b].qs);
    const __m128i sums = hsum4_i32(dot4_offset(q, 8, load32(y[0][b].qs)), dot4_offset(q, 8, load32(y[1][b].qs)),
                                   dot4_offset(q, 8, load32(y[2][b].qs)), dot4_offset(q, 8, load32(y[3][b].qs)));
    const __m128 scale = _mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), h2f4(y[0][b].d, y[1][b].d, y[2][b].d, y[3][b].d));
    acc = _mm_fmadd_ps(_mm_cvtepi32_ps(sums), scale, acc);
  }
  _mm_storeu_ps(out, acc);
}

void row4_q4_0_repacked(const void* w, std::size_t w_stride, const void* a, std::int64_t n, float* out) {
  const auto* y = static_cast<const BlockQ8_0*>(a);
  const BlockQ4_0* x[4];
  for (int j = 0; j < 4; ++j) x[j] = weight_row<Q4_0Ops>(w, w_stride, j);
  __m128 acc = _mm_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const ActPart p = Q4_0Ops::act(y[b]);
    const __m128i sums =
        hsum4_i32(offset_lanes(unpack_nibbles(x[0][b].qs), p), offset_lanes(unpack_nibbles(x[1][b].qs), p),
                  offset_lanes(unpack_nibbles(x[2][b].qs), p), offset_lanes(unpack_nibbles(x[3][b].qs), p));
    const __m128 scale = _mm_mul_ps(h2f4(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d), _mm_set1_ps(h2f(y[b].d)));
    acc = _mm_fmadd_ps(_mm_cvtepi32_ps(sums), scale, acc);
  }
  _mm_storeu_ps(out, acc);
}

// Four weight rows by four tokens (out[4 * row + token]): each weight block is unpacked once for
// four tokens and each activation block loaded (and its offset products formed) once for four
// rows. Per output the same operations in the same order as the one-row kernel: the scale
// products d_x * d_y and the minimum chains are lanes of float4s, broadcast from memory.
template <class T>
void tile4x4_lanes(const void* w, std::size_t w_stride, const void* a, std::size_t a_stride, std::int64_t n,
                   float* out) {
  const typename T::W* x[4];
  const typename T::A* y[4];
  for (int j = 0; j < 4; ++j) {
    x[j] = weight_row<T>(w, w_stride, j);
    y[j] = act_row<T>(a, a_stride, j);
  }
  __m256 acc[4][4];
  __m128 summs[4];  // [token], lane = row
  for (int r = 0; r < 4; ++r) {
    summs[r] = _mm_setzero_ps();
    for (int t = 0; t < 4; ++t) acc[r][t] = _mm256_setzero_ps();
  }
  alignas(16) float scale[4][4];  // [token][row]
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const __m128 dx = h2f4(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
    __m128 mx = _mm_setzero_ps();
    if constexpr (T::kHasMin) mx = h2f4(x[0][b].m, x[1][b].m, x[2][b].m, x[3][b].m);
    const auto q0 = T::prep(x[0][b]), q1 = T::prep(x[1][b]), q2 = T::prep(x[2][b]), q3 = T::prep(x[3][b]);
    for (int t = 0; t < 4; ++t) {
      const typename T::A& yb = y[t][b];
      _mm_store_ps(scale[t], _mm_mul_ps(dx, _mm_set1_ps(h2f(yb.d))));
      if constexpr (T::kHasMin) summs[t] = _mm_fmadd_ps(mx, _mm_set1_ps(h2f(yb.s)), summs[t]);
      const ActPart p = T::act(yb);
      acc[0][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&scale[t][0]), _mm256_cvtepi32_ps(T::lanes(q0, p)), acc[0][t]);
      acc[1][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&scale[t][1]), _mm256_cvtepi32_ps(T::lanes(q1, p)), acc[1][t]);
      acc[2][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&scale[t][2]), _mm256_cvtepi32_ps(T::lanes(q2, p)), acc[2][t]);
      acc[3][t] = _mm256_fmadd_ps(_mm256_broadcast_ss(&scale[t][3]), _mm256_cvtepi32_ps(T::lanes(q3, p)), acc[3][t]);
    }
  }
  for (int t = 0; t < 4; ++t) {
    alignas(16) float m[4];
    _mm_store_ps(m, summs[t]);
    for (int r = 0; r < 4; ++r) out[4 * r + t] = T::kHasMin ? hsum8(acc[r][t]) + m[r] : hsum8(acc[r][t]);
  }
}

// dot_q4_0_repacked's order (one exact integer sum per block, acc = fma(sum, d_x * d_y, acc)) for
// four rows by four tokens; per token, the four rows' chains are the lanes of one float4.
void tile4x4_q4_0_repacked(const void* w, std::size_t w_stride, const void* a, std::size_t a_stride, std::int64_t n,
                           float* out) {
  const BlockQ4_0* x[4];
  const BlockQ8_0* y[4];
  for (int j = 0; j < 4; ++j) {
    x[j] = weight_row<Q4_0Ops>(w, w_stride, j);
    y[j] = act_row<Q4_0Ops>(a, a_stride, j);
  }
  __m128 acc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};  // [token]
  for (std::int64_t b = 0; b < n / kQK; ++b) {
    const __m128 dx = h2f4(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d);
    const __m256i q0 = unpack_nibbles(x[0][b].qs), q1 = unpack_nibbles(x[1][b].qs), q2 = unpack_nibbles(x[2][b].qs),
                  q3 = unpack_nibbles(x[3][b].qs);
    for (int t = 0; t < 4; ++t) {
      const ActPart p = Q4_0Ops::act(y[t][b]);
      const __m128i sums =
          hsum4_i32(offset_lanes(q0, p), offset_lanes(q1, p), offset_lanes(q2, p), offset_lanes(q3, p));
      acc[t] = _mm_fmadd_ps(_mm_cvtepi32_ps(sums), _mm_mul_ps(dx, _mm_set1_ps(h2f(y[t][b].d))), acc[t]);
    }
  }
  for (int t = 0; t < 4; ++t) {
    alignas(16) float v[4];
    _mm_store_ps(v, acc[t]);
    for (int r = 0; r < 4; ++r) out[4 * r + t] = v[r];
  }
}

// ---- K-quants ----------------------------------------------------------------------------------

// Transposes four int4 rows (m[j] = the four values of token j) into four int4 columns.
inline void transpose4_i32(const __m128i (&m)[4], __m128i (&out)[4]) {
  __m128 r0 = _mm_castsi128_ps(m[0]), r1 = _mm_castsi128_ps(m[1]), r2 = _mm_castsi128_ps(m[2]),
         r3 = _mm_castsi128_ps(m[3]);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  out[0] = _mm_castps_si128(r0);
  out[1] = _mm_castps_si128(r1);
  out[2] = _mm_castps_si128(r2);
  out[3] = _mm_castps_si128(r3);
}

// q4k_pair with the weight nibbles already split (lo, hi), so four tokens share the unpacking.
inline __m256i q4k_pair_codes(__m256i lo, __m256i hi, const std::int8_t* a, __m256i s_lo, __m256i s_hi) {
  const __m256i plo = _mm256_madd_epi16(_mm256_maddubs_epi16(lo, load32(a)), s_lo);
  const __m256i phi = _mm256_madd_epi16(_mm256_maddubs_epi16(hi, load32(a + 32)), s_hi);
  return _mm256_add_epi32(plo, phi);
}

// dot_q4_k_repacked_x4 (ggml's repacked Q4_K GEMM: one float update per 2 sub-blocks) for four
// tokens: lane j of acc/macc is token j's pair of chains, with the same operations in the same order.
void tok4_q4_k_repacked_x4(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  const auto* x = static_cast<const BlockQ4_K*>(w);
  const BlockQ8_K* y[4];
  for (int j = 0; j < 4; ++j)
    y[j] = reinterpret_cast<const BlockQ8_K*>(static_cast<const std::uint8_t*>(a) + a_stride * j);
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  __m128 acc = _mm_setzero_ps(), macc = _mm_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    const Q4KScales s = q4k_scales(x[b].scales);
    const __m128 yd = _mm_setr_ps(y[0][b].d, y[1][b].d, y[2][b].d, y[3][b].d);
    const __m128 dd = _mm_mul_ps(_mm_set1_ps(h2f(x[b].d)), yd);
    const __m128 dm = _mm_mul_ps(_mm_set1_ps(h2f(x[b].dmin)), yd);
    const __m128i mins[4] = {q4k_min_products(y[0][b], s.min), q4k_min_products(y[1][b], s.min),
                             q4k_min_products(y[2][b], s.min), q4k_min_products(y[3][b], s.min)};
    __m128i mins_by_pair[4];
    transpose4_i32(mins, mins_by_pair);
    for (int c = 0; c < 4; ++c) {
      const __m256i q = load32(x[b].qs + 32 * c);
      const __m256i lo = _mm256_and_si256(q, m4);
      const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), m4);
      const __m256i s_lo = q4k_scale(s, 2 * c), s_hi = q4k_scale(s, 2 * c + 1);
      const __m128i sums = hsum4_i32(q4k_pair_codes(lo, hi, y[0][b].qs + 64 * c, s_lo, s_hi),
                                     q4k_pair_codes(lo, hi, y[1][b].qs + 64 * c, s_lo, s_hi),
                                     q4k_pair_codes(lo, hi, y[2][b].qs + 64 * c, s_lo, s_hi),
                                     q4k_pair_codes(lo, hi, y[3][b].qs + 64 * c, s_lo, s_hi));
      acc = _mm_fmadd_ps(_mm_cvtepi32_ps(sums), dd, acc);
      macc = _mm_fmadd_ps(_mm_cvtepi32_ps(mins_by_pair[c]), dm, macc);
    }
  }
  _mm_storeu_ps(out, _mm_sub_ps(acc, macc));
}

// dot_q4_k_repacked (ggml's repacked Q4_K GEMV: one float update per super-block) for four rows.
void row4_q4_k_repacked(const void* w, std::size_t w_stride, const void* a, std::int64_t n, float* out) {
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const BlockQ4_K* x[4];
  for (int j = 0; j < 4; ++j)
    x[j] = reinterpret_cast<const BlockQ4_K*>(static_cast<const std::uint8_t*>(w) + w_stride * j);
  __m128 acc = _mm_setzero_ps(), macc = _mm_setzero_ps();
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    for (int j = 0; j < 4; ++j) prefetch_ahead(x[j] + b, sizeof(BlockQ4_K));
    const __m128 yd = _mm_set1_ps(y[b].d);
    const __m128 dd = _mm_mul_ps(h2f4(x[0][b].d, x[1][b].d, x[2][b].d, x[3][b].d), yd);
    const __m128 dm = _mm_mul_ps(h2f4(x[0][b].dmin, x[1][b].dmin, x[2][b].dmin, x[3][b].dmin), yd);
    __m256i isum[4];
    __m128i mins[4];
    for (int j = 0; j < 4; ++j) {
      const Q4KScales s = q4k_scales(x[j][b].scales);
      mins[j] = q4k_min_products(y[b], s.min);
      isum[j] = _mm256_setzero_si256();
      for (int c = 0; c < 4; ++c) {
        isum[j] = _mm256_add_epi32(
            isum[j], q4k_pair(x[j][b].qs + 32 * c, y[b].qs + 64 * c, q4k_scale(s, 2 * c), q4k_scale(s, 2 * c + 1)));
      }
    }
    // hsum of four int4 vectors: widen each to 8 lanes with zeros (exact integer sums either way).
    const __m128i msum = hsum4_i32(_mm256_castsi128_si256(mins[0]), _mm256_castsi128_si256(mins[1]),
                                   _mm256_castsi128_si256(mins[2]), _mm256_castsi128_si256(mins[3]));
    acc = _mm_fmadd_ps(_mm_cvtepi32_ps(hsum4_i32(isum[0], isum[1], isum[2], isum[3])), dd, acc);
    macc = _mm_fmadd_ps(_mm_cvtepi32_ps(msum), dm, macc);
  }
  _mm_storeu_ps(out, _mm_sub_ps(acc, macc));
}

// dot_q4_k (one token, rows not repacked) for four rows: 8-lane chains per row.
void row4_q4_k(const void* w, std::size_t w_stride, const void* a, std::int64_t n, float* out) {
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const BlockQ4_K* x[4];
  for (int j = 0; j < 4; ++j)
    x[j] = reinterpret_cast<const BlockQ4_K*>(static_cast<const std::uint8_t*>(w) + w_stride * j);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  __m128 macc[4] = {_mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps(), _mm_setzero_ps()};
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    for (int j = 0; j < 4; ++j) {
      const Q4KScales s = q4k_scales(x[j][b].scales);
      const float d = y[b].d * h2f(x[j][b].d);
      const float dmin = -y[b].d * h2f(x[j][b].dmin);
      macc[j] = _mm_fmadd_ps(_mm_set1_ps(dmin), _mm_cvtepi32_ps(q4k_min_products(y[b], s.min)), macc[j]);
      __m256i isum = _mm256_setzero_si256();
      for (int c = 0; c < 4; ++c) {
        isum = _mm256_add_epi32(
            isum, q4k_pair(x[j][b].qs + 32 * c, y[b].qs + 64 * c, q4k_scale(s, 2 * c), q4k_scale(s, 2 * c + 1)));
      }
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(isum), acc[j]);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = hsum8(acc[j]) + hsum4(macc[j]);
}

// dot_q6_k (one token) for four rows.
void row4_q6_k(const void* w, std::size_t w_stride, const void* a, std::int64_t n, float* out) {
  const auto* y = static_cast<const BlockQ8_K*>(a);
  const BlockQ6_K* x[4];
  for (int j = 0; j < 4; ++j)
    x[j] = reinterpret_cast<const BlockQ6_K*>(static_cast<const std::uint8_t*>(w) + w_stride * j);
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    for (int j = 0; j < 4; ++j) {
      prefetch_ahead(x[j] + b, sizeof(BlockQ6_K));
      const float d = y[b].d * h2f(x[j][b].d);
      acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(q6k_lanes(x[j][b], y[b])), acc[j]);
    }
  }
  for (int j = 0; j < 4; ++j) out[j] = hsum8(acc[j]);
}

// q6k_lanes split in two so that four tokens share the unpacking: the 8 chunks of unsigned 6-bit
// codes of a super-block (weight-only), then the scaled products with one token's codes, minus
// the 32-offset through the block sums; the same exact integer lanes as q6k_lanes.
inline void q6k_codes(const BlockQ6_K& x, __m256i (&codes)[8]) {
  const __m256i m4 = _mm256_set1_epi8(0x0f);
  const __m256i m2 = _mm256_set1_epi8(0x30);
  for (int h = 0; h < 2; ++h) {
    const __m256i qa = load32(x.ql + 64 * h);
    const __m256i qb = load32(x.ql + 64 * h + 32);
    const __m256i hv = load32(x.qh + 32 * h);
    codes[4 * h + 0] = _mm256_or_si256(_mm256_and_si256(qa, m4), _mm256_and_si256(_mm256_slli_epi16(hv, 4), m2));
    codes[4 * h + 1] = _mm256_or_si256(_mm256_and_si256(qb, m4), _mm256_and_si256(_mm256_slli_epi16(hv, 2), m2));
    codes[4 * h + 2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qa, 4), m4), _mm256_and_si256(hv, m2));
    codes[4 * h + 3] =
        _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(qb, 4), m4), _mm256_and_si256(_mm256_srli_epi16(hv, 2), m2));
  }
}

inline __m256i q6k_token_lanes(const __m256i (&codes)[8], const __m256i (&scale)[8], __m256i offset_scales,
                               const BlockQ8_K& y) {
  __m256i isum = _mm256_setzero_si256();
  for (int chunk = 0; chunk < 8; ++chunk) {
    const __m256i p = _mm256_maddubs_epi16(codes[chunk], load32(y.qs + 32 * chunk));
    isum = _mm256_add_epi32(isum, _mm256_madd_epi16(p, scale[chunk]));
  }
  const __m256i offset = _mm256_madd_epi16(load32(y.bsums), offset_scales);
  return _mm256_sub_epi32(isum, _mm256_slli_epi32(offset, 5));
}

// dot_q6_k_tiled (the tiled GEMM: one exact integer per super-block, then the float step) for
// four tokens; lane j of the float4 is token j's chain.
void tok4_q6_k_tiled(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  const auto* x = static_cast<const BlockQ6_K*>(w);
  const BlockQ8_K* y[4];
  for (int j = 0; j < 4; ++j)
    y[j] = reinterpret_cast<const BlockQ8_K*>(static_cast<const std::uint8_t*>(a) + a_stride * j);
  __m128 acc = _mm_setzero_ps();
  __m256i codes[8], scale[8];
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    q6k_codes(x[b], codes);
    for (int chunk = 0; chunk < 8; ++chunk) {
      // Lanes 0-3 lie in sub-block 2*chunk, lanes 4-7 in 2*chunk + 1.
      scale[chunk] =
          _mm256_set_m128i(_mm_set1_epi16(x[b].scales[2 * chunk + 1]), _mm_set1_epi16(x[b].scales[2 * chunk]));
    }
    const __m256i offset_scales = _mm256_cvtepi8_epi16(load16(x[b].scales));
    const __m128i sums = hsum4_i32(
        q6k_token_lanes(codes, scale, offset_scales, y[0][b]), q6k_token_lanes(codes, scale, offset_scales, y[1][b]),
        q6k_token_lanes(codes, scale, offset_scales, y[2][b]), q6k_token_lanes(codes, scale, offset_scales, y[3][b]));
    // tiled_step with dmin = 0 and s2 = 0: r = s1 * d; acc = fma(r, yd, acc).
    const __m128 r = _mm_mul_ps(_mm_cvtepi32_ps(sums), _mm_set1_ps(h2f(x[b].d)));
    const __m128 yd = _mm_setr_ps(y[0][b].d, y[1][b].d, y[2][b].d, y[3][b].d);
    acc = _mm_fmadd_ps(r, yd, acc);
  }
  _mm_storeu_ps(out, acc);
}

}  // namespace
}  // namespace wisp::kernels::x86
