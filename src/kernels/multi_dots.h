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

struct MultiDot {
  std::uint32_t weight_type = 0;
  DotSlot slot = DotSlot::kDot;
  DotTok4Fn tok4 = nullptr;        // null: none
  DotRow4Fn row4 = nullptr;        // null: none
  DotTile4x4Fn tile4x4 = nullptr;  // null: none
};

// The multi-output variants of `single`, one of the functions of `k` (find_dot_kernel's entry for
// this CPU), or nullptr when it has none. Functions are matched by their slot in `k`, not by
// address: each ISA's kernels have internal linkage, so a copy in another file has another address.
const MultiDot* find_multi_dot(const DotKernel& k, DotFn single);

// The variants built for `isa` (count in *n; none for the scalar path or an ISA this CPU lacks).
const MultiDot* multi_dots_for(Isa isa, std::size_t* n);

// Each x86 ISA's variants (multi_dots.cpp in avx2/ and avx512/); call only on a CPU with the ISA.
const MultiDot* avx2_multi_dots(std::size_t* n);
const MultiDot* avx512_multi_dots(std::size_t* n);

}  // namespace wisp::kernels
