// The tiled GEMM of wisp's float order (F32, F16, BF16 weights; f32 activations): many tokens
// times a chunk of weight rows in one call, each output bit-equal to the one-token kernel that the
// dot table exports as DotKernel::dot_invariant for these types (x86/float_tiles-inl.h says the order),
// so the matmul can run a prefill as register tiles and stay batch invariant.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dot.h"

namespace wisp::kernels {

// y[t * y_stride + r] = dot_invariant(w + r * w_stride, a + t * a_stride, n) for r < n_rows,
// t < n_tok (w_stride in bytes, a_stride in floats).
using FloatGemmFn = void (*)(const std::uint8_t* w, std::size_t w_stride, std::int64_t n_rows, const float* a,
                             std::size_t a_stride, std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride);

struct FloatGemm {
  std::uint32_t weight_type = 0;
  FloatGemmFn gemm = nullptr;
};

// The GEMM whose outputs equal k.dot_invariant's, or nullptr when k has none (not a float type,
// no wisp order on k's ISA, or an ISA without the tiled form): from the kernel bundle of the ISA
// k belongs to (kernel_set.h), where each ISA's GEMMs are registered.
FloatGemmFn find_float_gemm(const DotKernel& k);

}  // namespace wisp::kernels
