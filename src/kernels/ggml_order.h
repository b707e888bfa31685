// Scalar replicas of the floating-point steps of llama.cpp's x86-64 CPU backend (ggml built with
// AVX2/FMA and AVX-512, the oracle wisp is tested against): its horizontal sums, its lane layouts
// and its vectorized exp. Each function performs the same IEEE operations in the same order as the
// SIMD code, so it returns the same bits.
//
// Why bother: a transformer run is chaotic at the last bit. Activations are re-quantized to 8 bits
// before every matmul and K/V and probabilities are rounded to half, so a 1-ulp difference upstream
// flips a rounding somewhere, and after 30 layers the logits differ by ~1. Merely "close" numerics
// agree with llama.cpp on ~94% of greedy tokens (llama.cpp's own batched and one-token paths agree
// on only 94.5% with each other). Bit-exact replicas make wisp's tokens llama.cpp's tokens.
// A SIMD kernel that keeps these lane layouts produces the same bits and is tested for equality.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace wisp::kernels::ggml {

// Which x86 build of llama.cpp the exact path reproduces. ggml compiles its float kernels for the
// widest vectors of the machine it is built on, and the width shows in the bits: AVX-512 sums in
// 16 lanes and has its own vector exp, AVX2 sums in 8 lanes (its one-token F16 dot in 4 x 8, folded
// by horizontal adds) with another exp. A llama.cpp built natively on a host (or the variant its
// dynamic CPU backend picks there) follows the host's ISA, so the engine's default is the host's
// (host_simd()); goldens say which build made them.
enum class Simd : std::uint8_t { kAvx512, kAvx2 };

// hsum_float_8 / tinyBLAS hsum(__m256): fold the upper 128 bits onto the lower, then 2, then 1.
inline float hsum8(const float x[8]) {
  const float r0 = x[4] + x[0], r1 = x[5] + x[1], r2 = x[6] + x[2], r3 = x[7] + x[3];
  return (r0 + r2) + (r1 + r3);
}

// GGML_F32x8_REDUCE's last step (AVX2 one-token dots): the two 128-bit halves added, then two
// horizontal adds: (t0 + t1) + (t2 + t3) with t_i = x_i + x_{i+4}.
inline float hadd8(const float x[8]) {
  const float t0 = x[0] + x[4], t1 = x[1] + x[5], t2 = x[2] + x[6], t3 = x[3] + x[7];
  return (t0 + t1) + (t2 + t3);
}

// _mm512_reduce_add_ps as GCC implements it: halves of 8, then 4, then pairs {0,2},{1,3}, then 1.
inline float reduce16(const float x[16]) {
  float t[8];
  for (int i = 0; i < 8; ++i) t[i] = x[8 + i] + x[i];
  const float u0 = t[4] + t[0], u1 = t[5] + t[1], u2 = t[6] + t[2], u3 = t[7] + t[3];
  return (u0 + u2) + (u1 + u3);
}

// ggml_v_expf (AVX-512): a degree-5 polynomial on a range-reduced argument, scaled by 2^n.
// Accurate to ~1.5 ulp; -inf gives 0, large arguments saturate to 0 or inf.
inline float expf(float x) {
  const float r = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, r);
  const float n = z - r;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const float u = b * b;
  const float j =
      std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
               std::fma(0x1.ffffecp-1f, b, 1.0f));
  if (std::isnan(n)) return n;
  if (std::fabs(n) > 192.0f) return n <= 0.0f ? 0.0f : INFINITY;  // -inf gives 0
  return std::ldexp(j, static_cast<int>(n));                      // scalef: j * 2^n, n integral here
}

// ggml_v_silu: x / (1 + e^-x) with the exp above.
inline float silu(float x) { return x / (1.0f + ggml::expf(0.0f - x)); }

// ggml_v_expf of the AVX2 build: the same range reduction and polynomial, but the polynomial's
// constant term is left out and folded into the final scaling, k * j + k with k = 2^n built in the
// exponent bits; |n| > 126 takes a two-factor scaling (so subnormal results round as there) and
// |n| > 192 saturates to 0 or inf.
inline float expf_avx2(float x) {
  const float r = 0x1.8p23f;
  const float z = std::fma(x, 0x1.715476p+0f, r);
  const float n = z - r;
  const float b = std::fma(-n, 0x1.7f7d1cp-20f, std::fma(-n, 0x1.62e4p-1f, x));
  const std::uint32_t e = std::bit_cast<std::uint32_t>(z) << 23;
  const float k = std::bit_cast<float>(e + std::bit_cast<std::uint32_t>(1.0f));
  const float u = b * b;
  const float j =
      std::fma(std::fma(std::fma(0x1.0e4020p-7f, b, 0x1.573e2ep-5f), u, std::fma(0x1.555e66p-3f, b, 0x1.fffdb6p-2f)), u,
               0x1.ffffecp-1f * b);
  const float an = std::fabs(n);
  if (!(an > 126.0f)) return std::fma(k, j, k);  // NaN n compares false: NaN, as there
  const std::uint32_t g = n <= 0.0f ? 0x82000000u : 0u;
  const float s1 = std::bit_cast<float>(g + 0x7f000000u);
  if (an > 192.0f) return s1 * s1;
  const float s2 = std::bit_cast<float>(e - g);
  return std::fma(s2, j, s2) * s1;
}

// ggml_v_silu of the AVX2 build.
inline float silu_avx2(float x) { return x / (1.0f + ggml::expf_avx2(0.0f - x)); }

}  // namespace wisp::kernels::ggml
