// SIMD dots of wisp's WQ types (formats/FORMAT.md) against F32 activations, in the float order of
// the scalar reference (dot_wq.cpp): per group, 8 float lanes (value j in lane j % 8) accumulated
// with FMA of float(q - z) times x, folded by hsum8, then s * dot summed in double.
//
// Unpacking uses the bit-plane layout as FORMAT.md intends: 8 consecutive values of a plane of
// width w lie in 8 consecutive bytes (run r = i / L of a plane of L bytes, bits [r*w, r*w + w)),
// so one 8-byte load, a zero-extension to int32 and one shift per plane give 8 codes. The one
// plane shorter than 8 bytes (1 bit, group 32: L = 4) holds two runs in the same 4 bytes.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <cstring>

#include "formats/wq_format.h"
#include "kernels/x86/simd-inl.h"

namespace wisp::kernels::x86 {
namespace {

// Codes i .. i+7 (i a multiple of 8) of one plane of width W in a group of G values, as int32.
template <int W, int G>
inline __m256i plane8(const std::uint8_t* plane, int i) {
  constexpr int kL = G * W / 8;  // plane bytes = values per run
  const __m256i mask = _mm256_set1_epi32((1 << W) - 1);
  if constexpr (kL >= 8) {
    const __m256i v = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(plane + i % kL)));
    return _mm256_and_si256(_mm256_srli_epi32(v, (i / kL) * W), mask);
  } else {
    static_assert(kL == 4);
    std::uint32_t bytes;
    std::memcpy(&bytes, plane, 4);
    const __m256i v = _mm256_cvtepu8_epi32(_mm_set1_epi32(static_cast<int>(bytes)));
    const int r = i / kL;
    return _mm256_and_si256(_mm256_srlv_epi32(v, _mm256_setr_epi32(r * W, r * W, r * W, r * W, (r + 1) * W, (r + 1) * W,
                                                                   (r + 1) * W, (r + 1) * W)),
                            mask);
  }
}

// A group's header (FORMAT.md): the f16 scale, the zero-point in every lane, the code planes.
struct WqGroup {
  float s;
  __m256i z;
  const std::uint8_t* planes;
};

inline WqGroup wq_group(const std::uint8_t* block) {
  std::uint16_t sh;
  std::memcpy(&sh, block, 2);
  return {h2f(sh), _mm256_set1_epi32(block[2]), block + kWqHeaderBytes};
}

// Codes i .. i+7 of a group as float(q - z).
template <int B, int G>
inline __m256 wq_values8(const std::uint8_t* p0, __m256i z, int i) {
  using P = WqPlanes<B>;
  __m256i q = plane8<P::W0, G>(p0, i);
  if constexpr (P::W1 != 0) q = _mm256_or_si256(q, _mm256_slli_epi32(plane8<P::W1, G>(p0 + G * P::W0 / 8, i), P::W0));
  return _mm256_cvtepi32_ps(_mm256_sub_epi32(q, z));
}

template <int B, int G>
float dot_wq(const void* w, const void* a, std::int64_t n) {
  constexpr std::int64_t kBlock = static_cast<std::int64_t>(wq_block_bytes(B, G));
  const auto* blocks = static_cast<const std::uint8_t*>(w);
  const auto* x = static_cast<const float*>(a);
  double sum = 0.0;
  for (std::int64_t g = 0; g < n / G; ++g) {
    const WqGroup grp = wq_group(blocks + g * kBlock);
    const float* xg = x + g * G;
    __m256 acc = _mm256_setzero_ps();
    for (int i = 0; i < G; i += 8)
      acc = _mm256_fmadd_ps(wq_values8<B, G>(grp.planes, grp.z, i), _mm256_loadu_ps(xg + i), acc);
    sum += static_cast<double>(grp.s) * static_cast<double>(hsum8(acc));
  }
  return static_cast<float>(sum);
}

}  // namespace
}  // namespace wisp::kernels::x86
