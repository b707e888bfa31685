// ggml's 16-lane float paths (Ggml16Ops, kernel_set.h) in AVX-512, as ggml's AVX-512 build runs
// them: the same operations lane by lane as the portable forms (ggml_lanes16.cpp), so the same bits.
#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "kernels/kernel_set.h"

namespace wisp::kernels {

namespace {

float dot_gemm(const float* a, const float* b, std::int64_t n) {
  __m512 acc = _mm512_setzero_ps();
  for (std::int64_t i = 0; i < n; i += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
  return _mm512_reduce_add_ps(acc);  // reduce16's order (ggml_order.h)
}

float dot_vec(const float* a, const float* b, std::int64_t n) {
  const std::int64_t np = n - n % 64;
  __m512 acc[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  for (std::int64_t i = 0; i < np; i += 64) {
    for (int j = 0; j < 4; ++j) {
      acc[j] = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16 * j), _mm512_loadu_ps(b + i + 16 * j), acc[j]);
    }
  }
  acc[0] = _mm512_add_ps(acc[0], acc[2]);
  acc[1] = _mm512_add_ps(acc[1], acc[3]);
  double sum = _mm512_reduce_add_ps(_mm512_add_ps(acc[0], acc[1]));
  for (std::int64_t e = np; e < n; ++e) sum += static_cast<double>(a[e] * b[e]);
  return static_cast<float>(sum);
}

// ggml::expf (ggml_v_expf) on 16 lanes: the scalar version's ldexp is the scalef here, and its
// two special cases are the blend.
inline __m512 expf16(__m512 x) {
  const __m512 r = _mm512_set1_ps(0x1.8p23f);
  const __m512 z = _mm512_fmadd_ps(x, _mm512_set1_ps(0x1.715476p+0f), r);
  const __m512 n = _mm512_sub_ps(z, r);
  const __m512 b =
      _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.7f7d1cp-20f), _mm512_fnmadd_ps(n, _mm512_set1_ps(0x1.62e4p-1f), x));
  const __mmask16 big = _mm512_cmp_ps_mask(_mm512_abs_ps(n), _mm512_set1_ps(192.0f), _CMP_GT_OQ);
  const __m512 u = _mm512_mul_ps(b, b);
  const __m512 j = _mm512_fmadd_ps(
      _mm512_fmadd_ps(_mm512_fmadd_ps(_mm512_set1_ps(0x1.0e4020p-7f), b, _mm512_set1_ps(0x1.573e2ep-5f)), u,
                      _mm512_fmadd_ps(_mm512_set1_ps(0x1.555e66p-3f), b, _mm512_set1_ps(0x1.fffdb6p-2f))),
      u, _mm512_fmadd_ps(_mm512_set1_ps(0x1.ffffecp-1f), b, _mm512_set1_ps(1.0f)));
  const __m512 res = _mm512_scalef_ps(j, n);
  if (big == 0) return res;
  const __m512 zero = _mm512_setzero_ps();
  const __m512 alt = _mm512_mask_blend_ps(_mm512_cmp_ps_mask(n, zero, _CMP_LE_OQ), _mm512_set1_ps(INFINITY), zero);
  return _mm512_mask_blend_ps(big, res, alt);
}

// ggml::silu on 16 lanes: x / (1 + e^(0 - x)).
inline __m512 silu16(__m512 x) {
  return _mm512_div_ps(x, _mm512_add_ps(_mm512_set1_ps(1.0f), expf16(_mm512_sub_ps(_mm512_setzero_ps(), x))));
}

void silu_mul(const float* gate, const float* up, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; i += 16) {
    _mm512_storeu_ps(out + i, _mm512_mul_ps(silu16(_mm512_loadu_ps(gate + i)), _mm512_loadu_ps(up + i)));
  }
}

double exp_sum(float* x, std::int64_t n, float max) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; i += 16) {
    const __m512 e = expf16(_mm512_sub_ps(_mm512_loadu_ps(x + i), _mm512_set1_ps(max)));
    _mm512_storeu_ps(x + i, e);
    sum += static_cast<double>(_mm512_reduce_add_ps(e));  // reduce16's order
  }
  return sum;
}

}  // namespace

const Ggml16Ops* avx512_ggml16() {
  static constexpr Ggml16Ops kOps = {dot_gemm, dot_vec, silu_mul, exp_sum};
  return &kOps;
}

}  // namespace wisp::kernels
