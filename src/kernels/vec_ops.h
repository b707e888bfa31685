// Portable element-wise float loops (xsimd): each output lane is computed with exactly the scalar
// operation sequence (x * s * w, x + y, fma(v, w, acc)), so the vector and scalar forms give the
// same bits; only independent lanes run side by side. xsimd picks the widest vector the build
// targets (AVX-512, AVX2, NEON); without it, or on a target without fused multiply-add where
// xsimd's fma would round twice, the scalar loop runs.
#pragma once

#include <cmath>
#include <cstdint>

#if __has_include(<xsimd/xsimd.hpp>)
#include <xsimd/xsimd.hpp>
#if XSIMD_WITH_AVX512F || XSIMD_WITH_FMA3_AVX || XSIMD_WITH_NEON64
#define WISP_VEC_FMA 1
#endif
#define WISP_VEC 1
#endif

namespace wisp::kernels::vec {

#if defined(WISP_VEC)
using Batch = xsimd::batch<float>;
constexpr std::int64_t kWidth = static_cast<std::int64_t>(Batch::size);
#endif

// y[i] = x[i] * s * w[i] (left to right, as rmsnorm's scalar form).
inline void mul_scale_mul(const float* x, float s, const float* w, float* y, std::int64_t n) {
  std::int64_t i = 0;
#if defined(WISP_VEC)
  const Batch sv(s);
  for (; i + kWidth <= n; i += kWidth) {
    (Batch::load_unaligned(x + i) * sv * Batch::load_unaligned(w + i)).store_unaligned(y + i);
  }
#endif
  for (; i < n; ++i) y[i] = x[i] * s * w[i];
}

// y[i] = x[i] * s.
inline void mul_scale(const float* x, float s, float* y, std::int64_t n) {
  std::int64_t i = 0;
#if defined(WISP_VEC)
  const Batch sv(s);
  for (; i + kWidth <= n; i += kWidth) (Batch::load_unaligned(x + i) * sv).store_unaligned(y + i);
#endif
  for (; i < n; ++i) y[i] = x[i] * s;
}

// y[i] += x[i].
inline void add_to(const float* x, float* y, std::int64_t n) {
  std::int64_t i = 0;
#if defined(WISP_VEC)
  for (; i + kWidth <= n; i += kWidth)
    (Batch::load_unaligned(y + i) + Batch::load_unaligned(x + i)).store_unaligned(y + i);
#endif
  for (; i < n; ++i) y[i] += x[i];
}

// acc[i] = fma(v[i], w, acc[i]).
inline void fma_scalar(const float* v, float w, float* acc, std::int64_t n) {
  std::int64_t i = 0;
#if defined(WISP_VEC_FMA)
  const Batch wv(w);
  for (; i + kWidth <= n; i += kWidth) {
    xsimd::fma(Batch::load_unaligned(v + i), wv, Batch::load_unaligned(acc + i)).store_unaligned(acc + i);
  }
#endif
  for (; i < n; ++i) acc[i] = std::fma(v[i], w, acc[i]);
}

}  // namespace wisp::kernels::vec
