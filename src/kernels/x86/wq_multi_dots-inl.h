// Multi-output variants of the WQ dots (wq_dots.h), for kernels/multi_dots.h: four tokens per
// weight row (prefill: each group's codes unpacked and converted once for the four) and four rows
// per activation (decode: the activation loaded once for the four rows, four independent chains).
// Per output the float order of dot_wq: 8 FMA lanes per group folded by hsum8, s * dot added in
// double, so results are bit-identical.
#pragma once

#include "formats/wq_format.h"
#include "kernels/x86/wq_dots-inl.h"

namespace wisp::kernels::x86 {
namespace {

template <int B, int G>
void tok4_wq(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out) {
  constexpr std::int64_t kBlock = static_cast<std::int64_t>(wq_block_bytes(B, G));
  const auto* blocks = static_cast<const std::uint8_t*>(w);
  const float* x[4];
  for (int j = 0; j < 4; ++j) x[j] = reinterpret_cast<const float*>(static_cast<const std::uint8_t*>(a) + a_stride * j);
  double sum[4] = {0.0, 0.0, 0.0, 0.0};
  for (std::int64_t g = 0; g < n / G; ++g) {
    const WqGroup grp = wq_group(blocks + g * kBlock);
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int i = 0; i < G; i += 8) {
      const __m256 v = wq_values8<B, G>(grp.planes, grp.z, i);
      for (int j = 0; j < 4; ++j) acc[j] = _mm256_fmadd_ps(v, _mm256_loadu_ps(x[j] + g * G + i), acc[j]);
    }
    for (int j = 0; j < 4; ++j) sum[j] += static_cast<double>(grp.s) * static_cast<double>(hsum8(acc[j]));
  }
  for (int j = 0; j < 4; ++j) out[j] = static_cast<float>(sum[j]);
}

template <int B, int G>
void row4_wq(const void* w, std::size_t w_stride, const void* a, std::int64_t n, float* out) {
  constexpr std::int64_t kBlock = static_cast<std::int64_t>(wq_block_bytes(B, G));
  const std::uint8_t* rows[4];
  for (int j = 0; j < 4; ++j) rows[j] = static_cast<const std::uint8_t*>(w) + w_stride * j;
  const auto* x = static_cast<const float*>(a);
  double sum[4] = {0.0, 0.0, 0.0, 0.0};
  for (std::int64_t g = 0; g < n / G; ++g) {
    const WqGroup grp[4] = {wq_group(rows[0] + g * kBlock), wq_group(rows[1] + g * kBlock),
                            wq_group(rows[2] + g * kBlock), wq_group(rows[3] + g * kBlock)};
    __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int i = 0; i < G; i += 8) {
      const __m256 xv = _mm256_loadu_ps(x + g * G + i);
      for (int j = 0; j < 4; ++j) acc[j] = _mm256_fmadd_ps(wq_values8<B, G>(grp[j].planes, grp[j].z, i), xv, acc[j]);
    }
    for (int j = 0; j < 4; ++j) sum[j] += static_cast<double>(grp[j].s) * static_cast<double>(hsum8(acc[j]));
  }
  for (int j = 0; j < 4; ++j) out[j] = static_cast<float>(sum[j]);
}

}  // namespace
}  // namespace wisp::kernels::x86
