#include "kernels/activations.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "formats/half.h"
#include "formats/half_rows.h"
#include "kernels/ggml_order.h"
#include "kernels/kernel_set.h"
#include "kernels/vec_ops.h"

namespace wisp::kernels {

float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.79788456080286535587989211986876f;
  constexpr float kCoef = 0.044715f;
  return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + kCoef * x * x)));
}

void silu_mul(const float* gate, const float* up, float* out, std::int64_t n, ggml::Simd isa) {
  if (isa == ggml::Simd::kAvx2) {
    // ggml's AVX2 swiglu: its vector exp for whole groups of 8, libm's for the tail.
    const std::int64_t simd = n - n % 8;
    for (std::int64_t i = 0; i < simd; ++i) out[i] = ggml::silu_avx2(gate[i]) * up[i];
    for (std::int64_t i = simd; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
    return;
  }
  // ggml's AVX-512 swiglu: its vector exp for whole groups of 16, libm's for the tail.
  const std::int64_t simd = n - n % 16;
  kernel_set().ggml16.silu_mul(gate, up, out, simd);
  for (std::int64_t i = simd; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

namespace {

// gelu_tanh of every half value, rounded to half: ggml's GELU table, which its gelu reads for
// inputs in (-10, 10) after rounding them to half. Built once per process (65,536 tanh calls),
// then only read.
const std::vector<std::uint16_t>& gelu_f16_table() {
  static const std::vector<std::uint16_t> table = [] {
    std::vector<std::uint16_t> t(65536);
    for (std::uint32_t h = 0; h < 65536; ++h) {
      t[h] = f32_to_f16(gelu_tanh(f16_to_f32(static_cast<std::uint16_t>(h))));
    }
    return t;
  }();
  return table;
}

}  // namespace

void gelu_tanh_mul(const float* gate, const float* up, float* out, std::int64_t n) {
  const std::vector<std::uint16_t>& table = gelu_f16_table();
  // The inputs rounded to half a chunk at a time (hardware conversion where the build has it).
  constexpr std::int64_t kChunk = 64;
  std::uint16_t h[kChunk];
  for (std::int64_t i0 = 0; i0 < n; i0 += kChunk) {
    const std::int64_t m = std::min(kChunk, n - i0);
    f32_to_f16_row(gate + i0, h, m);
    for (std::int64_t i = 0; i < m; ++i) {
      const float g = gate[i0 + i];
      float act;
      if (g <= -10.0f) {
        act = 0.0f;
      } else if (g >= 10.0f) {
        act = g;
      } else {
        act = f16_to_f32(table[h[i]]);
      }
      out[i0 + i] = act * up[i0 + i];
    }
  }
}

void softcap(float* x, std::int64_t n, float cap) {
  const float inv = 1.0f / cap;
  for (std::int64_t i = 0; i < n; ++i) x[i] = std::tanh(x[i] * inv) * cap;
}

void scale(float* x, std::int64_t n, float s) { vec::mul_scale(x, s, x, n); }

void add(const float* x, float* y, std::int64_t n) { vec::add_to(x, y, n); }

namespace {

// softmax's body; a sink, when has_sink, joins the max and the sum (after the groups, in double).
void softmax_impl(float* x, std::int64_t n, ggml::Simd isa, bool has_sink, float sink) {
  float max = -std::numeric_limits<float>::infinity();
  for (std::int64_t i = 0; i < n; ++i) max = std::max(max, x[i]);
  if (has_sink) max = std::max(max, sink);
  double sum = 0.0;
  std::int64_t i = 0;
  if (isa == ggml::Simd::kAvx2) {
    // ggml_vec_soft_max_f32 (AVX2): groups of 8 through its vector exp, each group folded as
    // hsum8 (high half onto low, then 2, then 1) and added to a double.
    for (; i + 8 <= n; i += 8) {
      for (int l = 0; l < 8; ++l) x[i + l] = ggml::expf_avx2(x[i + l] - max);
      sum += static_cast<double>(ggml::hsum8(x + i));
    }
  }
  // ggml_vec_soft_max_f32 (AVX-512): groups of 16 through the vector exp, each group summed by
  // the 16-lane reduction and added to a double; the tail through libm's expf.
  if (isa == ggml::Simd::kAvx512) {
    i = n - n % 16;
    sum = kernel_set().ggml16.exp_sum(x, i, max);
  }
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - max);
    sum += static_cast<double>(x[i]);
  }
  if (has_sink) sum += static_cast<double>(std::exp(sink - max));
  const auto inv = static_cast<float>(1.0 / sum);
  for (std::int64_t k = 0; k < n; ++k) x[k] *= inv;
}

}  // namespace

void softmax(float* x, std::int64_t n, ggml::Simd isa) { softmax_impl(x, n, isa, false, 0.0f); }

void softmax_with_sink(float* x, std::int64_t n, float sink, ggml::Simd isa) { softmax_impl(x, n, isa, true, sink); }

void swiglu_oai_mul(const float* gate, const float* up, float* out, std::int64_t n, float alpha, float limit) {
  for (std::int64_t k = 0; k < n; ++k) {
    const float x = std::min(gate[k], limit);
    const float y = std::clamp(up[k], -limit, limit);
    const float glu = x / (1.0f + std::exp(alpha * (-x)));
    out[k] = glu * (y + 1.0f);
  }
}

}  // namespace wisp::kernels
