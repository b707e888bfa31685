// WQ dots (formats/wq_format.h): the scalar reference, which every ISA's bundle starts from
// (kernel_set.h). The activation stays F32; a group contributes s * sum_j (q_j - z) x_j.
//
// Float order (defined here; the SIMD kernels in src/kernels/x86/wq_dots-inl.h keep it, so the tests
// compare them for equality): per group, 8 float lanes, value j of the group in lane j % 8,
// lane = fma(float(q_j - z), x_j, lane) in increasing j (q - z is an exact small integer); the
// lanes folded by hsum8 (ggml_order.h) into the group dot; the row sum accumulates
// double(s) * double(group dot) in double, rounded to float at the end.

#include <array>
#include <cmath>
#include <cstring>

#include "formats/half.h"
#include "formats/wq_format.h"
#include "kernels/ggml_order.h"
#include "kernels/kernel_set.h"

namespace wisp::kernels {

namespace {

template <int B, int G>
float dot_wq(const void* w, const void* a, std::int64_t n) {
  const auto* blocks = static_cast<const std::uint8_t*>(w);
  const auto* x = static_cast<const float*>(a);
  constexpr std::size_t bb = wq_block_bytes(B, G);
  std::uint8_t codes[G];
  double sum = 0.0;
  for (std::int64_t g = 0; g < n / G; ++g) {
    const std::uint8_t* block = blocks + g * static_cast<std::int64_t>(bb);
    const float s = f16_to_f32(static_cast<std::uint16_t>(block[0] | (block[1] << 8)));
    const int z = block[2];
    wq_unpack_codes(block + kWqHeaderBytes, B, G, codes);
    const float* xg = x + g * G;
    float lanes[8] = {};
    for (int j = 0; j < G; ++j) lanes[j % 8] = std::fma(static_cast<float>(codes[j] - z), xg[j], lanes[j % 8]);
    sum += static_cast<double>(s) * static_cast<double>(ggml::hsum8(lanes));
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

std::span<const DotKernel> scalar_wq_dots() { return kWqKernels; }

}  // namespace wisp::kernels
