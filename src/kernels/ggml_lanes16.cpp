// The portable forms of ggml's 16-lane float paths (Ggml16Ops, kernel_set.h): the operations of
// ggml's AVX-512 build lane by lane in scalar code, the bits every ISA's form must return. They
// run where an ISA has no form of its own (scalar, AVX2, NEON).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "formats/half_rows.h"
#include "kernels/ggml_order.h"
#include "kernels/kernel_set.h"
#include "kernels/vec_ops.h"

namespace wisp::kernels {

namespace {

float dot_gemm(const float* a, const float* b, std::int64_t n) {
  float acc[16] = {};
  for (std::int64_t i = 0; i < n; i += 16) {
    for (int l = 0; l < 16; ++l) acc[l] = std::fma(a[i + l], b[i + l], acc[l]);
  }
  return ggml::reduce16(acc);
}

float dot_vec(const float* a, const float* b, std::int64_t n) {
  const std::int64_t np = n - n % 64;
  float acc[4][16] = {};
  for (std::int64_t i = 0; i < np; i += 64) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 16; ++l) {
        const std::int64_t e = i + 16 * j + l;
        acc[j][l] = std::fma(a[e], b[e], acc[j][l]);
      }
    }
  }
  for (int l = 0; l < 16; ++l) {
    acc[0][l] += acc[2][l];
    acc[1][l] += acc[3][l];
  }
  for (int l = 0; l < 16; ++l) acc[0][l] += acc[1][l];
  double sum = ggml::reduce16(acc[0]);
  for (std::int64_t e = np; e < n; ++e) sum += static_cast<double>(a[e] * b[e]);
  return static_cast<float>(sum);
}

void silu_mul(const float* gate, const float* up, float* out, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = ggml::silu(gate[i]) * up[i];
}

double exp_sum(float* x, std::int64_t n, float max) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < n; i += 16) {
    for (int l = 0; l < 16; ++l) x[i + l] = ggml::expf(x[i + l] - max);
    sum += static_cast<double>(ggml::reduce16(x + i));
  }
  return sum;
}

// Row r of `rows` as floats: in place, or converted from halves into buf (exact).
const float* row_f32(const void* row, bool half, std::int64_t d, float* buf) {
  if (!half) return static_cast<const float*>(row);
  f16_to_f32_row(static_cast<const std::uint16_t*>(row), buf, d);
  return buf;
}

void dot_vec_rows(const float* const* qs, int n_q, const void* const* rows, bool half, std::int64_t n, std::int64_t d,
                  float scale, float* const* out) {
  std::vector<float> buf(half ? static_cast<std::size_t>(d) : 0);
  for (std::int64_t r = 0; r < n; ++r) {
    const float* k = row_f32(rows[r], half, d, buf.data());
    for (int m = 0; m < n_q; ++m) out[m][r] = dot_vec(k, qs[m], d) * scale;
  }
}

void fma_lanes(const float* const* probs, int n_m, const void* const* rows, bool half, std::int64_t t0, std::int64_t n,
               std::int64_t d, std::int64_t lanes, bool init, float* const* acc) {
  if (init) {
    for (std::int64_t j = 0; j < std::min(n, lanes); ++j) {
      for (int m = 0; m < n_m; ++m) std::fill_n(acc[m] + ((t0 + j) % lanes) * d, d, 0.0f);
    }
  }
  std::vector<float> buf(half ? static_cast<std::size_t>(d) : 0);
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t t = t0 + j;
    const float* v = row_f32(rows[j], half, d, buf.data());
    for (int m = 0; m < n_m; ++m) vec::fma_scalar(v, probs[m][t], acc[m] + (t % lanes) * d, d);
  }
}

}  // namespace

Ggml16Ops portable_ggml16() { return {dot_gemm, dot_vec, silu_mul, exp_sum, dot_vec_rows, fma_lanes}; }

}  // namespace wisp::kernels
