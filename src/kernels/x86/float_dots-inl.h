// x86 dots of float weight rows (F32, F16, BF16), compiled once per ISA like the other kernel
// headers here. They keep the lanes of the scalar references in dot_float.cpp (ggml's vec_dot and
// tinyBLAS orders; read that file first), so they return the same bits:
//   - 16 float lanes are one __m512 under AVX-512 and two __m256 (lanes 0-7, 8-15) under AVX2;
//     each lane sees the same FMAs in the same order either way, and reduce16 folds the 16 lanes
//     as _mm512_reduce_add_ps does (high 8 onto low 8, then hsum8).
//   - BF16 uses the AVX512_BF16 pair-dot where the CPU has it (checked per call: one load and a
//     branch) and an exact emulation otherwise: the odd pair element first, each step one FMA,
//     denormal inputs read as zero and denormal results flushed to zero.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "kernels/x86/float_tiles-inl.h"  // wisp's own float order (dot_invariant)
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// _mm512_reduce_add_ps's order on 16 lanes given as low and high halves (ggml::reduce16).
inline float reduce16(__m256 lo, __m256 hi) { return hsum8(_mm256_add_ps(hi, lo)); }

#if defined(__AVX512F__)
inline float reduce16(__m512 v) {
  return reduce16(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}
#endif

// 8 floats from 8 F32 / F16 values (F16 widening is exact).
inline __m256 load8(const float* p) { return _mm256_loadu_ps(p); }
inline __m256 load8(const std::uint16_t* p) { return _mm256_cvtph_ps(load16(p)); }
#if defined(__AVX512F__)
inline __m512 load16f(const float* p) { return _mm512_loadu_ps(p); }
inline __m512 load16f(const std::uint16_t* p) { return _mm512_cvtph_ps(load32(p)); }
#endif

// ggml_vec_dot_f32/_f16's lanes over the whole steps of 64 (the first np elements): four 16-lane
// FMA accumulators, folded 0+2, 1+3, then 0+1, then reduce16.
template <class T>
float vec_lanes(const T* x, const T* y, std::int64_t np) {
#if defined(__AVX512F__)
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (std::int64_t i = 0; i < np; i += 64) {
    a0 = _mm512_fmadd_ps(load16f(x + i), load16f(y + i), a0);
    a1 = _mm512_fmadd_ps(load16f(x + i + 16), load16f(y + i + 16), a1);
    a2 = _mm512_fmadd_ps(load16f(x + i + 32), load16f(y + i + 32), a2);
    a3 = _mm512_fmadd_ps(load16f(x + i + 48), load16f(y + i + 48), a3);
  }
  return reduce16(_mm512_add_ps(_mm512_add_ps(a0, a2), _mm512_add_ps(a1, a3)));
#else
  __m256 a[8];  // accumulator j: lanes 0-7 in a[2j], 8-15 in a[2j + 1]
  for (__m256& v : a) v = _mm256_setzero_ps();
  for (std::int64_t i = 0; i < np; i += 64) {
    for (int h = 0; h < 8; ++h) a[h] = _mm256_fmadd_ps(load8(x + i + 8 * h), load8(y + i + 8 * h), a[h]);
  }
  const __m256 lo = _mm256_add_ps(_mm256_add_ps(a[0], a[4]), _mm256_add_ps(a[2], a[6]));
  const __m256 hi = _mm256_add_ps(_mm256_add_ps(a[1], a[5]), _mm256_add_ps(a[3], a[7]));
  return reduce16(lo, hi);
#endif
}

// tinyBLAS: one 16-lane FMA accumulator over the row (n a multiple of 16), reduce16.
template <class T>
float gemm_lanes(const T* x, const T* y, std::int64_t n) {
#if defined(__AVX512F__)
  __m512 acc = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < n; i += 16) acc = _mm512_fmadd_ps(load16f(x + i), load16f(y + i), acc);
  return reduce16(acc);
#else
  __m256 lo = _mm256_setzero_ps(), hi = lo;
  for (std::int64_t i = 0; i < n; i += 16) {
    lo = _mm256_fmadd_ps(load8(x + i), load8(y + i), lo);
    hi = _mm256_fmadd_ps(load8(x + i + 8), load8(y + i + 8), hi);
  }
  return reduce16(lo, hi);
#endif
}

// ggml_vec_dot_f32's float tail (dot_float.cpp, tail_f32): rounded products added in order, the
// last n % 8 fused. Scalar intrinsics, so that the compiler cannot contract the unfused ones.
inline float tail_f32(const float* x, const float* y, std::int64_t n, float sum) {
  __m128 s = _mm_set_ss(sum);
  const std::int64_t unfused = n & ~std::int64_t{7};
  for (std::int64_t i = 0; i < unfused; ++i) s = _mm_add_ss(s, _mm_mul_ss(_mm_load_ss(x + i), _mm_load_ss(y + i)));
  for (std::int64_t i = unfused; i < n; ++i) s = _mm_fmadd_ss(_mm_load_ss(x + i), _mm_load_ss(y + i), s);
  return _mm_cvtss_f32(s);
}

float dot_f32(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const float*>(w);
  const auto* y = static_cast<const float*>(a);
  const std::int64_t np = n - n % 64;
  return tail_f32(x + np, y + np, n - np, vec_lanes(x, y, np));
}

float dot_f32_batched(const void* w, const void* a, std::int64_t n) {
  if (n % 16 != 0) return dot_f32(w, a, n);
  return gemm_lanes(static_cast<const float*>(w), static_cast<const float*>(a), n);
}

float dot_f16(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const std::uint16_t*>(a);
  const std::int64_t np = n - n % 64;
  double sum = vec_lanes(x, y, np);
  for (std::int64_t i = np; i < n; ++i) sum += static_cast<double>(h2f(x[i]) * h2f(y[i]));  // float product, double sum
  return static_cast<float>(sum);
}

float dot_f16_batched(const void* w, const void* a, std::int64_t n) {
  if (n % 16 != 0) return dot_f16(w, a, n);
  return gemm_lanes(static_cast<const std::uint16_t*>(w), static_cast<const std::uint16_t*>(a), n);
}

// ---- BF16 ----

inline float bf2f(std::uint16_t h) {
  return _mm_cvtss_f32(_mm_castsi128_ps(_mm_cvtsi32_si128(static_cast<int>(h) << 16)));
}

// The one-token tail: plain float products (no flushing) summed in double.
inline double tail_bf16(const std::uint16_t* x, const std::uint16_t* y, std::int64_t n, double sum) {
  for (std::int64_t i = 0; i < n; ++i) sum += static_cast<double>(bf2f(x[i]) * bf2f(y[i]));
  return sum;
}

// Denormal floats (|v| < 2^-126) to zero of the same sign.
inline __m256 flush_denormals(__m256 v) {
  const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 tiny = _mm256_cmp_ps(_mm256_and_ps(v, magnitude), _mm256_set1_ps(0x1p-126f), _CMP_LT_OQ);
  return _mm256_andnot_ps(_mm256_and_ps(tiny, magnitude), v);
}

// The pair-dot on 16 BF16 values of each operand into 8 lanes (lane j: elements 2j, 2j+1).
inline __m256 pair_dot8(__m256 acc, __m256i x, __m256i y) {
  // Denormal BF16 inputs read as zero: keep only the sign where the exponent field is 0.
  const __m256i exponent = _mm256_set1_epi16(0x7f80), magnitude = _mm256_set1_epi16(0x7fff);
  x = _mm256_andnot_si256(
      _mm256_and_si256(_mm256_cmpeq_epi16(_mm256_and_si256(x, exponent), _mm256_setzero_si256()), magnitude), x);
  y = _mm256_andnot_si256(
      _mm256_and_si256(_mm256_cmpeq_epi16(_mm256_and_si256(y, exponent), _mm256_setzero_si256()), magnitude), y);
  const __m256i high = _mm256_set1_epi32(static_cast<int>(0xffff0000u));
  const __m256 x_odd = _mm256_castsi256_ps(_mm256_and_si256(x, high)),
               y_odd = _mm256_castsi256_ps(_mm256_and_si256(y, high));
  const __m256 x_even = _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)),
               y_even = _mm256_castsi256_ps(_mm256_slli_epi32(y, 16));
  acc = flush_denormals(_mm256_fmadd_ps(x_odd, y_odd, acc));
  return flush_denormals(_mm256_fmadd_ps(x_even, y_even, acc));
}

// The pair-dot of the 32 values from element e into 16 lanes (lo: elements e..e+15).
inline void pair_dot32(const std::uint16_t* x, const std::uint16_t* y, std::int64_t e, __m256& lo, __m256& hi) {
  lo = pair_dot8(lo, load32(x + e), load32(y + e));
  hi = pair_dot8(hi, load32(x + e + 16), load32(y + e + 16));
}

float dot_bf16_emulated(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const std::uint16_t*>(a);
  const std::int64_t np = n - n % 64;
  __m256 c1_lo = _mm256_setzero_ps(), c1_hi = c1_lo, c2_lo = c1_lo, c2_hi = c1_lo;
  for (std::int64_t i = 0; i < np; i += 64) {
    pair_dot32(x, y, i, c1_lo, c1_hi);
    pair_dot32(x, y, i + 32, c2_lo, c2_hi);
  }
  double sum = 0.0;
  sum += static_cast<double>(reduce16(c1_lo, c1_hi));
  sum += static_cast<double>(reduce16(c2_lo, c2_hi));
  return static_cast<float>(tail_bf16(x + np, y + np, n - np, sum));
}

float dot_bf16_batched_emulated(const void* w, const void* a, std::int64_t n) {
  if (n % 32 != 0) return dot_bf16_emulated(w, a, n);
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const std::uint16_t*>(a);
  __m256 lo = _mm256_setzero_ps(), hi = lo;
  for (std::int64_t i = 0; i < n; i += 32) pair_dot32(x, y, i, lo, hi);
  return reduce16(lo, hi);
}

#if defined(__AVX512F__)
// The instruction itself (ggml_vec_dot_bf16 and tinyBLAS<32, __m512, __m512bh>), for CPUs with
// AVX512_BF16; the file's flags do not include it, hence the target attribute.
__attribute__((target("avx512bf16"))) float dot_bf16_native(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const std::uint16_t*>(a);
  const std::int64_t np = n - n % 64;
  __m512 c1 = _mm512_setzero_ps(), c2 = c1;
  for (std::int64_t i = 0; i < np; i += 64) {
    c1 = _mm512_dpbf16_ps(c1, (__m512bh)_mm512_loadu_si512(x + i), (__m512bh)_mm512_loadu_si512(y + i));
    c2 = _mm512_dpbf16_ps(c2, (__m512bh)_mm512_loadu_si512(x + i + 32), (__m512bh)_mm512_loadu_si512(y + i + 32));
  }
  double sum = 0.0;
  sum += static_cast<double>(reduce16(c1));
  sum += static_cast<double>(reduce16(c2));
  return static_cast<float>(tail_bf16(x + np, y + np, n - np, sum));
}

__attribute__((target("avx512bf16"))) float dot_bf16_batched_native(const void* w, const void* a, std::int64_t n) {
  if (n % 32 != 0) return dot_bf16_native(w, a, n);
  const auto* x = static_cast<const std::uint16_t*>(w);
  const auto* y = static_cast<const std::uint16_t*>(a);
  __m512 acc = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < n; i += 32) {
    acc = _mm512_dpbf16_ps(acc, (__m512bh)_mm512_loadu_si512(x + i), (__m512bh)_mm512_loadu_si512(y + i));
  }
  return reduce16(acc);
}
#endif

float dot_bf16(const void* w, const void* a, std::int64_t n) {
#if defined(__AVX512F__)
  if (__builtin_cpu_supports("avx512bf16")) return dot_bf16_native(w, a, n);
#endif
  return dot_bf16_emulated(w, a, n);
}

float dot_bf16_batched(const void* w, const void* a, std::int64_t n) {
#if defined(__AVX512F__)
  if (__builtin_cpu_supports("avx512bf16")) return dot_bf16_batched_native(w, a, n);
#endif
  return dot_bf16_batched_emulated(w, a, n);
}

}  // namespace
}  // namespace wisp::kernels::x86
