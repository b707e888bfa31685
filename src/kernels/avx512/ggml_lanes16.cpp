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

// 16 values of a cache row: f32, or halves widened exactly.
template <bool kHalf>
inline __m512 load16(const void* row, std::int64_t i) {
  if constexpr (kHalf) {
    return _mm512_cvtph_ps(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(static_cast<const std::uint16_t*>(row) + i)));
  } else {
    return _mm512_loadu_ps(static_cast<const float*>(row) + i);
  }
}

// One value of a cache row (the tails past the vectors).
template <bool kHalf>
inline float load1(const void* row, std::int64_t i) {
  if constexpr (kHalf) {
    return _cvtsh_ss(static_cast<const std::uint16_t*>(row)[i]);
  } else {
    return static_cast<const float*>(row)[i];
  }
}

// dot_vec's accumulators over the first np values (np % 64 == 0), folded 0+2, 1+3, then 0+1: the
// vector that _mm512_reduce_add_ps turns into the dot's vector part.
template <bool kHalf>
inline __m512 folded_dot(const void* k, const float* q, std::int64_t np) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (std::int64_t i = 0; i < np; i += 64) {
    a0 = _mm512_fmadd_ps(load16<kHalf>(k, i), _mm512_loadu_ps(q + i), a0);
    a1 = _mm512_fmadd_ps(load16<kHalf>(k, i + 16), _mm512_loadu_ps(q + i + 16), a1);
    a2 = _mm512_fmadd_ps(load16<kHalf>(k, i + 32), _mm512_loadu_ps(q + i + 32), a2);
    a3 = _mm512_fmadd_ps(load16<kHalf>(k, i + 48), _mm512_loadu_ps(q + i + 48), a3);
  }
  return _mm512_add_ps(_mm512_add_ps(a0, a2), _mm512_add_ps(a1, a3));
}

// The reduce16 tree (lanes l + 8, then + 4, then pairs {0,2},{1,3}, then 1) of 16 vectors at
// once, each step adding two vectors' halves side by side. Input slot s = 4j + k comes out in lane
// 4k + j, so the caller puts row 4k + j in slot 4j + k and lane r holds row r's sum.
inline __m512 reduce16_x16(const __m512 v[16]) {
  __m512 w[8], x[4], y[2];
  for (int a = 0; a < 8; ++a) {
    w[a] = _mm512_add_ps(_mm512_shuffle_f32x4(v[2 * a], v[2 * a + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_f32x4(v[2 * a], v[2 * a + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  for (int c = 0; c < 4; ++c) {
    x[c] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * c], w[2 * c + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                         _mm512_shuffle_f32x4(w[2 * c], w[2 * c + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  }
  for (int e = 0; e < 2; ++e) {
    y[e] = _mm512_add_ps(_mm512_shuffle_ps(x[2 * e], x[2 * e + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                         _mm512_shuffle_ps(x[2 * e], x[2 * e + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  return _mm512_add_ps(_mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_ps(y[0], y[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

// Per row and query dot_vec's operations, for R queries at once: each K row's vectors are loaded
// (widened) once for the R queries, each query keeping its own four accumulators and their fold;
// 16 rows share one transposed reduction instead of 16 horizontal ones. (float -> double -> float
// of the sum is exact when there is no tail.)
template <bool kHalf, int R>
void dot_vec_rows_d64(const float* const* qs, const void* const* rows, std::int64_t n, std::int64_t d, float scale,
                      float* const* out) {
  const __m512 s = _mm512_set1_ps(scale);
  alignas(64) float folded[R][16][16];
  std::int64_t r = 0;
  for (; r + 16 <= n; r += 16) {
    for (int slot = 0; slot < 16; ++slot) {
      const void* k = rows[r + 4 * (slot % 4) + slot / 4];
      __m512 a[R][4];
      for (int m = 0; m < R; ++m) {
        for (int j = 0; j < 4; ++j) a[m][j] = _mm512_setzero_ps();
      }
      for (std::int64_t i = 0; i < d; i += 64) {
        __m512 kv[4];
        for (int j = 0; j < 4; ++j) kv[j] = load16<kHalf>(k, i + 16 * j);
        for (int m = 0; m < R; ++m) {
          for (int j = 0; j < 4; ++j) a[m][j] = _mm512_fmadd_ps(kv[j], _mm512_loadu_ps(qs[m] + i + 16 * j), a[m][j]);
        }
      }
      for (int m = 0; m < R; ++m) {
        _mm512_store_ps(folded[m][slot],
                        _mm512_add_ps(_mm512_add_ps(a[m][0], a[m][2]), _mm512_add_ps(a[m][1], a[m][3])));
      }
    }
    for (int m = 0; m < R; ++m) {
      __m512 v[16];
      for (int slot = 0; slot < 16; ++slot) v[slot] = _mm512_load_ps(folded[m][slot]);
      _mm512_storeu_ps(out[m] + r, _mm512_mul_ps(reduce16_x16(v), s));
    }
  }
  for (; r < n; ++r) {
    for (int m = 0; m < R; ++m) out[m][r] = _mm512_reduce_add_ps(folded_dot<kHalf>(rows[r], qs[m], d)) * scale;
  }
}

// dot_vec of a cache row with a tail (n % 64 != 0): the tail's products added in double.
template <bool kHalf>
float dot_vec_tail(const void* k, const float* q, std::int64_t n) {
  const std::int64_t np = n - n % 64;
  double sum = _mm512_reduce_add_ps(folded_dot<kHalf>(k, q, np));
  for (std::int64_t e = np; e < n; ++e) sum += static_cast<double>(load1<kHalf>(k, e) * q[e]);
  return static_cast<float>(sum);
}

template <bool kHalf>
void dot_vec_rows_any(const float* const* qs, int n_q, const void* const* rows, std::int64_t n, std::int64_t d,
                      float scale, float* const* out) {
  if (d % 64 != 0) {
    for (int m = 0; m < n_q; ++m) {
      for (std::int64_t r = 0; r < n; ++r) out[m][r] = dot_vec_tail<kHalf>(rows[r], qs[m], d) * scale;
    }
    return;
  }
  constexpr int kR = 4;  // 4 x 4 accumulators and a row's 4 vectors: 20 registers
  int m = 0;
  for (; m + kR <= n_q; m += kR) dot_vec_rows_d64<kHalf, kR>(qs + m, rows, n, d, scale, out + m);
  switch (n_q - m) {
    case 3: dot_vec_rows_d64<kHalf, 3>(qs + m, rows, n, d, scale, out + m); break;
    case 2: dot_vec_rows_d64<kHalf, 2>(qs + m, rows, n, d, scale, out + m); break;
    case 1: dot_vec_rows_d64<kHalf, 1>(qs + m, rows, n, d, scale, out + m); break;
    default: break;
  }
}

void dot_vec_rows(const float* const* qs, int n_q, const void* const* rows, bool half, std::int64_t n, std::int64_t d,
                  float scale, float* const* out) {
  if (half) return dot_vec_rows_any<true>(qs, n_q, rows, n, d, scale, out);
  dot_vec_rows_any<false>(qs, n_q, rows, n, d, scale, out);
}

// fma_lanes on W vectors of 16 columns (from column c) for R queries: lane by lane, each lane's
// positions t = lane (mod lanes) in order with the R x W accumulators in registers; each V row
// load serves the R queries.
template <bool kHalf, int W, int R>
void fma_lanes_tile(const float* const* probs, const void* const* rows, std::int64_t t0, std::int64_t n, std::int64_t d,
                    std::int64_t lanes, bool init, float* const* acc, std::int64_t c) {
  const std::int64_t t_end = t0 + n;
  const std::int64_t first_end = n < lanes ? t_end : t0 + lanes;
  for (std::int64_t t_first = t0; t_first < first_end; ++t_first) {
    const std::int64_t lane = t_first % lanes;
    __m512 a[R][W];
    for (int m = 0; m < R; ++m) {
      for (int w = 0; w < W; ++w) {
        a[m][w] = init ? _mm512_setzero_ps() : _mm512_loadu_ps(acc[m] + lane * d + c + 16 * w);
      }
    }
    for (std::int64_t t = t_first; t < t_end; t += lanes) {
      const void* v = rows[t - t0];
      __m512 vw[W];
      for (int w = 0; w < W; ++w) vw[w] = load16<kHalf>(v, c + 16 * w);
      for (int m = 0; m < R; ++m) {
        const __m512 p = _mm512_set1_ps(probs[m][t]);
        for (int w = 0; w < W; ++w) a[m][w] = _mm512_fmadd_ps(vw[w], p, a[m][w]);
      }
    }
    for (int m = 0; m < R; ++m) {
      for (int w = 0; w < W; ++w) _mm512_storeu_ps(acc[m] + lane * d + c + 16 * w, a[m][w]);
    }
  }
}

template <bool kHalf, int W>
void fma_lanes_cols(const float* const* probs, int n_m, const void* const* rows, std::int64_t t0, std::int64_t n,
                    std::int64_t d, std::int64_t lanes, bool init, float* const* acc, std::int64_t c) {
  constexpr int kR = 4;  // 4 x W accumulators, W row vectors and a broadcast: at most 21 registers
  int m = 0;
  for (; m + kR <= n_m; m += kR) fma_lanes_tile<kHalf, W, kR>(probs + m, rows, t0, n, d, lanes, init, acc + m, c);
  switch (n_m - m) {
    case 3: fma_lanes_tile<kHalf, W, 3>(probs + m, rows, t0, n, d, lanes, init, acc + m, c); break;
    case 2: fma_lanes_tile<kHalf, W, 2>(probs + m, rows, t0, n, d, lanes, init, acc + m, c); break;
    case 1: fma_lanes_tile<kHalf, W, 1>(probs + m, rows, t0, n, d, lanes, init, acc + m, c); break;
    default: break;
  }
}

template <bool kHalf>
void fma_lanes_rows(const float* const* probs, int n_m, const void* const* rows, std::int64_t t0, std::int64_t n,
                    std::int64_t d, std::int64_t lanes, bool init, float* const* acc) {
  std::int64_t c = 0;
  for (; c + 64 <= d; c += 64) fma_lanes_cols<kHalf, 4>(probs, n_m, rows, t0, n, d, lanes, init, acc, c);
  switch ((d - c) / 16) {
    case 3: fma_lanes_cols<kHalf, 3>(probs, n_m, rows, t0, n, d, lanes, init, acc, c); break;
    case 2: fma_lanes_cols<kHalf, 2>(probs, n_m, rows, t0, n, d, lanes, init, acc, c); break;
    case 1: fma_lanes_cols<kHalf, 1>(probs, n_m, rows, t0, n, d, lanes, init, acc, c); break;
    default: break;
  }
  c += (d - c) / 16 * 16;
  for (std::int64_t j = 0; j < n && c < d; ++j) {  // the last d % 16 columns
    const std::int64_t t = t0 + j;
    for (int m = 0; m < n_m; ++m) {
      float* a = acc[m] + (t % lanes) * d;
      for (std::int64_t i = c; i < d; ++i) {
        a[i] = std::fma(load1<kHalf>(rows[j], i), probs[m][t], init && j < lanes ? 0.0f : a[i]);
      }
    }
  }
}

void fma_lanes(const float* const* probs, int n_m, const void* const* rows, bool half, std::int64_t t0, std::int64_t n,
               std::int64_t d, std::int64_t lanes, bool init, float* const* acc) {
  if (half) return fma_lanes_rows<true>(probs, n_m, rows, t0, n, d, lanes, init, acc);
  fma_lanes_rows<false>(probs, n_m, rows, t0, n, d, lanes, init, acc);
}

}  // namespace

const Ggml16Ops* avx512_ggml16() {
  static constexpr Ggml16Ops kOps = {dot_gemm, dot_vec, silu_mul, exp_sum, dot_vec_rows, fma_lanes};
  return &kOps;
}

}  // namespace wisp::kernels
