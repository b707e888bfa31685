// Multi-output variants of the one-row dot kernels: one call computes four outputs that the
// matmul would otherwise get from four calls of the same DotFn, either four activation rows
// against one weight row (prefill: the weight blocks are unpacked once for four tokens) or four
// weight rows against one activation row (decode: four independent FMA chains instead of one, and
// the activation blocks loaded once). Each output is computed with exactly the float operations,
// in exactly the order, of the DotFn it replaces, so results are bit-identical; the tests compare
// them for equality.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/dot.h"

namespace wisp::kernels {

// out[j] = single(w, a + j * a_stride, n) for j < 4.
using DotTok4Fn = void (*)(const void* w, const void* a, std::size_t a_stride, std::int64_t n, float* out);
// out[j] = single(w + j * w_stride, a, n) for j < 4.
using DotRow4Fn = void (*)(const void* w, std::size_t w_stride, const void* a, std::int64_t n, float* out);

// Which of a DotKernel's functions a variant reproduces.
enum class DotSlot { kDot, kBatched, kRepacked, kRepackedX4, kInvariant };

// out[4 * r + t] = single(w + r * w_stride, a + t * a_stride, n) for r, t < 4: four rows by four
// tokens, sharing both the weight unpacking and the activation loads.
using DotTile4x4Fn = void (*)(const void* w, std::size_t w_stride, const void* a, std::size_t a_stride, std::int64_t n,
                              float* out);

// y[t * y_stride + r] = single(w + r * w_stride, a + t * a_stride, n) for r < n_rows (1 ..
// MultiDot::gemm_rows, 8 or 16) and t < n_tok: a chunk of weight rows against a whole batch, the
// rows in vector lanes and their blocks unpacked once for every token (x86/blocks8_gemm-inl.h,
// blocks8_gemm16-inl.h). `scratch` holds gemm8_scratch_bytes(n, gemm_rows) bytes (any alignment):
// the unpacked tile of the rows, not a copy kept.
// Per 32 values at most 384 bytes: the blocks8 types' 8 rows x 32 code bytes, 8 scales and 8
// minimums as floats (320), or a K-quant super-block's share of its tile (kquant_super8_gemm-inl.h:
// 2880 bytes per 256 values); plus alignment.
using DotGemm8Fn = void (*)(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                            std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch);
constexpr std::size_t gemm8_scratch_bytes(std::int64_t n, int rows = 8) {
  return (static_cast<std::size_t>(n / 32) * 384 + 32) * static_cast<std::size_t>(rows / 8);
}

struct MultiDot {
  std::uint32_t weight_type = 0;
  DotSlot slot = DotSlot::kDot;
  DotTok4Fn tok4 = nullptr;        // null: none
  DotRow4Fn row4 = nullptr;        // null: none
  DotTile4x4Fn tile4x4 = nullptr;  // null: none
  DotGemm8Fn gemm8 = nullptr;      // null: none
  int gemm_rows = 8;               // the most rows one gemm8 call takes (8, or 16 on AVX-512), n_rows <= this
};

// The multi-output variants of `single`, one of the functions of `k` (find_dot_kernel's entry for
// this CPU, from the running bundle kernel_set()), or nullptr when it has none. Functions are
// matched by their slot in `k`, not by address: each ISA's kernels have internal linkage, so a
// copy in another file has another address.
const MultiDot* find_multi_dot(const DotKernel& k, DotFn single);

// The variants built for `isa` (count in *n; none for the scalar path or an ISA this CPU lacks):
// kernel_set_for(isa)->multi_dots (kernel_set.h).
const MultiDot* multi_dots_for(Isa isa, std::size_t* n);

}  // namespace wisp::kernels
