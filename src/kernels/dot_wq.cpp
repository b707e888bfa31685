// WQ dots (formats/wq_format.h): the scalar reference and the per-ISA tables behind
// find_wq_dot_kernel_for. The activation stays F32; a group contributes s * sum_j (q_j - z) x_j.
//
// Float order (defined here; the SIMD kernels in src/kernels/x86/wq_dots.h keep it, so the tests
// compare them for equality): per group, 8 float lanes, value j of the group in lane j % 8,
// lane = fma(float(q_j - z), x_j, lane) in increasing j (q - z is an exact small integer); the
// lanes folded by hsum8 (ggml_order.h) into the group dot; the row sum accumulates
// double(s) * double(group dot) in double, rounded to float at the end.
#include "kernels/dot_wq.h"

#include <array>
#include <cmath>
#include <cstring>

#include "formats/half.h"
#include "formats/wq_format.h"
#include "kernels/ggml_order.h"
#include "kernels/isa_wq_dots.h"

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

using WqTable = std::array<DotKernel, kWqKernels.size()>;

WqTable build_wq_table(Isa isa) {
  WqTable t = kWqKernels;
  const IsaDots* dots = nullptr;
  std::size_t n = 0;
#if defined(__x86_64__)
  if (isa == Isa::kAvx512) dots = avx512_wq_dots(&n);
  if (isa == Isa::kAvx2) dots = avx2_wq_dots(&n);
#endif
  for (std::size_t j = 0; j < n; ++j) {
    for (DotKernel& k : t) {
      if (k.weight_type != dots[j].weight_type) continue;
      k.dot = dots[j].dot;
      k.isa = isa_name(isa);
    }
  }
  return t;
}

}  // namespace

const DotKernel* find_wq_dot_kernel(std::uint32_t type_id) {
  for (const DotKernel& k : kWqKernels) {
    if (k.weight_type == type_id) return &k;
  }
  return nullptr;
}

const DotKernel* find_wq_dot_kernel_for(std::uint32_t type_id, Isa isa) {
  static const WqTable avx512 = build_wq_table(Isa::kAvx512);
  static const WqTable avx2 = build_wq_table(Isa::kAvx2);
  const WqTable* t = isa == Isa::kAvx512 ? &avx512 : isa == Isa::kAvx2 ? &avx2 : nullptr;
  if (t == nullptr) return find_wq_dot_kernel(type_id);
  for (const DotKernel& k : *t) {
    if (k.weight_type == type_id) return &k;
  }
  return nullptr;
}

}  // namespace wisp::kernels
