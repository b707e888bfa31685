// Per-block-type dot products of one weight row (in its stored block type) with one activation row
// (already converted to the type's ActFormat), and the table that picks them.
//
// The table is the dispatch point for the SIMD kernels of the fast-kernels issue: dot_table()
// returns the best implementation for the running CPU. Today every entry is the scalar reference,
// which reproduces ggml's generic (scalar) numerics: an exact integer dot per block, then float
// accumulation in ggml's order. A SIMD entry must give the same integer dots; its float sums may
// differ by rounding only, and its tests compare it against these scalar ones.
#pragma once

#include <cstdint>

#include "kernels/act_quant.h"

namespace wisp::kernels {

// Dot of n values: weight row `w` (stored blocks) with activation row `a` (in the kernel's act).
using DotFn = float (*)(const void* w, const void* a, std::int64_t n);

struct DotKernel {
  std::uint32_t weight_type = 0;  // GGML type id of the weight row
  ActFormat act = ActFormat::kF32;
  DotFn dot = nullptr;
  const char* isa = "scalar";  // which implementation this is, for logs and benchmarks
};

// The kernel for weight type `type_id` on this CPU, or nullptr if no matmul exists for the type.
const DotKernel* find_dot_kernel(std::uint32_t type_id);
// The scalar reference kernel for `type_id` (nullptr if none): what SIMD kernels are tested against.
const DotKernel* find_scalar_dot_kernel(std::uint32_t type_id);

// Scalar reference dots (dot_legacy.cpp, dot_kquant.cpp, dot_float.cpp).
namespace scalar {
float dot_q4_0(const void* w, const void* a, std::int64_t n);
float dot_q4_1(const void* w, const void* a, std::int64_t n);
float dot_q5_0(const void* w, const void* a, std::int64_t n);
float dot_q5_1(const void* w, const void* a, std::int64_t n);
float dot_q8_0(const void* w, const void* a, std::int64_t n);
float dot_q2_k(const void* w, const void* a, std::int64_t n);
float dot_q3_k(const void* w, const void* a, std::int64_t n);
float dot_q4_k(const void* w, const void* a, std::int64_t n);
float dot_q5_k(const void* w, const void* a, std::int64_t n);
float dot_q6_k(const void* w, const void* a, std::int64_t n);
float dot_f32(const void* w, const void* a, std::int64_t n);
float dot_f16(const void* w, const void* a, std::int64_t n);
float dot_bf16(const void* w, const void* a, std::int64_t n);
}  // namespace scalar

}  // namespace wisp::kernels
