// Activation formats for the dequant-matmul: each weight type multiplies against the activation
// vector in a "vec_dot type" of its own (ggml's term), converted once per matmul:
//   Q4_0, Q5_0, Q8_0 -> Q8_0        Q4_1, Q5_1 -> Q8_1        K-quants -> Q8_K
//   F16 -> F16 (activation rounded to half)   BF16 -> BF16   F32 -> F32
// Using the same activation formats as llama.cpp is what makes wisp's logits agree with it on
// near-ties: the integer part of every block dot is then exact and identical, and only the float
// accumulation order can differ.
//
// Rounding follows ggml's x86 code (the oracle this project tests against): Q8_0/Q8_1 scale by
// 127/amax and round half to even; Q8_K scales by -127/max (max = the signed value of largest
// magnitude) and rounds half to even, as quantize_row_q8_K_ref does.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/cpu_features.h"

namespace wisp::kernels {

// kQ8_Kx4 is Q8_K as ggml's x86 interleaving quantizer makes it for repacked weights: when both
// +m and -m are the largest magnitude it scales +m to -127 (the row quantizer takes the first).
// kQ8_0Split is wisp's own layout of the Q8_0 quantization (the same codes and half scales) for
// its block-parallel kernels: see Q8_0SplitRow.
enum class ActFormat : std::uint8_t { kF32, kF16, kBF16, kQ8_0, kQ8_1, kQ8_K, kQ8_Kx4, kQ8_0Split };

const char* act_format_name(ActFormat f);

// Q8_1: Q8_0 plus s = d * sum(qs) (half), so a dot with an offset weight (Q4_1: d*q + m)
// folds the m term into one multiply per block.
struct BlockQ8_1 {
  std::uint16_t d;  // half
  std::uint16_t s;  // half: d * sum(qs)
  std::int8_t qs[32];
};
static_assert(sizeof(BlockQ8_1) == 36);

// Q8_K: 256 values with a float scale and per-16 sums of the codes (for the K-quant mins).
struct BlockQ8_K {
  float d;
  std::int8_t qs[256];
  std::int16_t bsums[16];
};
static_assert(sizeof(BlockQ8_K) == 292);

// A row of n values in ActFormat::kQ8_0Split: the codes and scales of Q8_0 (round(x * 127 / amax)
// per 32 values, d = half(amax / 127); Q8_1 has the same codes and d), laid out in planes so that
// a kernel can load the values of 8 consecutive blocks as one vector: all n codes first (block b at
// qs + 32 b), then per block, each as a plane of n / 32 values: d as a float (the half value,
// exactly), the sum of the block's codes (for weights with an offset, folded once per block), and
// Q8_1's s = half(amax / 127 * sum) as a float (for weights with a minimum: the same m * s term as
// the Q8_1 reference, so that only the float order differs from it). Codes lie in [-127, 127].
struct Q8_0SplitRow {
  const std::int8_t* qs;
  const float* d;
  const std::int32_t* sum;
  const float* s;
};
inline Q8_0SplitRow q8_0_split_row(const void* a, std::int64_t n) {
  const auto* p = static_cast<const std::uint8_t*>(a);
  const auto* d = reinterpret_cast<const float*>(p + n);
  const auto* sum = reinterpret_cast<const std::int32_t*>(d + n / 32);
  return {reinterpret_cast<const std::int8_t*>(p), d, sum, reinterpret_cast<const float*>(sum + n / 32)};
}

// Values per activation block (1 for the float formats).
std::int64_t act_block_elems(ActFormat f);
// Bytes of one converted row of n values (n a multiple of act_block_elems).
std::size_t act_row_bytes(ActFormat f, std::int64_t n);
// Converts one row of n floats into format f at `out` (act_row_bytes(f, n) bytes).
void convert_act_row(ActFormat f, const float* x, void* out, std::int64_t n);

// The row quantizers, each running the best implementation for this CPU (the running kernel
// bundle's, kernel_set.h); every implementation writes the same bytes as the scalar reference.
void quantize_act_q8_0(const float* x, void* out, std::int64_t n);
void quantize_act_q8_1(const float* x, void* out, std::int64_t n);
void quantize_act_q8_K(const float* x, void* out, std::int64_t n);
void quantize_act_q8_Kx4(const float* x, void* out, std::int64_t n);
// Q8_0 into the split layout (the codes and scales of quantize_act_q8_0 and the s of
// quantize_act_q8_1, rearranged, plus the code sums).
void quantize_act_q8_0_split(const float* x, void* out, std::int64_t n);

// One implementation of a row quantizer (n a multiple of the block size: not checked here).
using ActQuantFn = void (*)(const float* x, void* out, std::int64_t n);
// The quantizer of format f (Q8_0, Q8_1, Q8_K, Q8_Kx4) built for `isa` (Isa::kScalar: the
// reference), or nullptr when the CPU cannot run `isa` or f is a float format. For tests and
// benchmarks; an ISA without its own quantizers returns the scalar one.
ActQuantFn find_act_quantizer(ActFormat f, Isa isa);

}  // namespace wisp::kernels
