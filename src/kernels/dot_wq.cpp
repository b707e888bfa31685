// Scalar WQ dots: per group, s * (sum_j q_j a_j - z * sum_j a_j), accumulated in double across
// groups (the group sums stay in float, as an integer-code SIMD kernel would keep them).
#include "kernels/dot_wq.h"

#include <array>
#include <cstring>

#include "formats/half.h"
#include "formats/wq_format.h"

namespace wisp::kernels {

namespace {

template <int B, int G>
float dot_wq(const void* w, const void* a, std::int64_t n) {
  const auto* blocks = static_cast<const std::uint8_t*>(w);
  const auto* x = static_cast<const float*>(a);
  constexpr std::size_t bb = wq_block_bytes(B, G);
  std::uint8_t block[bb];
  std::uint8_t codes[G];
  double sum = 0.0;
  for (std::int64_t g = 0; g < n / G; ++g) {
    std::memcpy(block, blocks + g * static_cast<std::int64_t>(bb), bb);
    const float s = f16_to_f32(static_cast<std::uint16_t>(block[0] | (block[1] << 8)));
    const int z = block[2];
    wq_unpack_codes(block + kWqHeaderBytes, B, G, codes);
    const float* xg = x + g * G;
    float qa = 0.0f, sa = 0.0f;
    for (int j = 0; j < G; ++j) {
      qa += static_cast<float>(codes[j]) * xg[j];
      sa += xg[j];
    }
    sum += static_cast<double>(s) * (static_cast<double>(qa) - z * static_cast<double>(sa));
  }
  return static_cast<float>(sum);
}

template <int B, int G>
constexpr DotKernel kernel() {
  return DotKernel{wq_type_id(B, G), ActFormat::kF32, dot_wq<B, G>};
}

constexpr std::array kWqKernels = {
    kernel<2, 32>(), kernel<2, 64>(), kernel<2, 128>(), kernel<3, 32>(), kernel<3, 64>(), kernel<3, 128>(),
    kernel<4, 32>(), kernel<4, 64>(), kernel<4, 128>(), kernel<5, 32>(), kernel<5, 64>(), kernel<5, 128>(),
    kernel<6, 32>(), kernel<6, 64>(), kernel<6, 128>(), kernel<8, 32>(), kernel<8, 64>(), kernel<8, 128>(),
};

}  // namespace

const DotKernel* find_wq_dot_kernel(std::uint32_t type_id) {
  for (const DotKernel& k : kWqKernels) {
    if (k.weight_type == type_id) return &k;
  }
  return nullptr;
}

}  // namespace wisp::kernels
