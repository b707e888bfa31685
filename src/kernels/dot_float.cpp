// Scalar references for float weight rows (F32, F16, BF16) with activations in the same format, in
// the float order of llama.cpp's x86-64 CPU backend as llama-cpp-python builds it on the reference
// machine (GCC 12, AVX-512 with AVX512_BF16; read off ggml's vec.cpp, llamafile/sgemm.cpp and the
// disassembly of that libggml-cpu.so). ggml has two paths:
//
// One token (ggml_vec_dot_f32 / _f16 / _bf16):
//   F32, F16: four 16-lane FMA accumulators over steps of 64 (element i in accumulator (i/16)%4,
//     lane i%16), folded 0+2, 1+3, then 0+1, then reduce16. The elements past the last whole step
//     are added one by one: F16 in double (float products); F32 in float, where GCC vectorized
//     that loop so that the first (tail & ~7) elements add rounded products and the last tail % 8
//     are contracted into FMAs (see tail_f32).
//   BF16: the AVX512_BF16 pair-dot (vdpbf16ps) on two 16-lane accumulators, one per half of each
//     64-element step (lane j of the first takes elements 2j and 2j+1 of the step, the second
//     elements 32+2j and 33+2j); each reduced by reduce16 and added in double; the tail in double.
// Batches of 2+ tokens (tinyBLAS), when the row length is a multiple of 16 (BF16: 32) and the
//   matrix has a multiple of 4 rows (else ggml falls back to the one-token path): a single 16-lane
//   accumulator (FMA, or the pair-dot for BF16) over the whole row, folded by reduce16.
//
// The pair-dot's arithmetic, checked against the instruction on random and denormal-heavy data
// (tests/unit/kernels/test_x86_kernels.cpp compares the AVX-512 kernel, which uses it, with this
// file): per lane, acc = fma(x[2j+1], y[2j+1], acc) and then acc = fma(x[2j], y[2j], acc), each
// rounded to nearest even, with denormal inputs read as zero and denormal results flushed to zero.
// Its exact emulation here means every ISA gets the reference machine's bits; llama.cpp built on a
// CPU without AVX512_BF16 uses another BF16 order (plain FMA lanes), which wisp does not follow.
#include <cmath>
#include <cstdint>

#include "formats/half.h"
#include "kernels/dot.h"
#include "kernels/ggml_order.h"
// Last: no multiply and add below may be fused by the compiler; the fused steps are written as
// std::fma, the unfused ones must round the product first.
#include "formats/blocks/exact_float.h"

namespace wisp::kernels::scalar {

namespace {

// Element loaders: F16 and BF16 widen exactly to float.
struct F32 {
  static float at(const void* p, std::int64_t i) { return static_cast<const float*>(p)[i]; }
};
struct F16 {
  static float at(const void* p, std::int64_t i) { return f16_to_f32(static_cast<const std::uint16_t*>(p)[i]); }
};
struct BF16 {
  static float at(const void* p, std::int64_t i) { return bf16_to_f32(static_cast<const std::uint16_t*>(p)[i]); }
};

// The one-token FMA lanes of F32 and F16 over the whole steps of 64 (the first np elements).
template <class T>
float vec_lanes(const void* x, const void* y, std::int64_t np) {
  float acc[4][16] = {};
  for (std::int64_t i = 0; i < np; i += 64) {
    for (int j = 0; j < 4; ++j) {
      for (int l = 0; l < 16; ++l) {
        const std::int64_t e = i + 16 * j + l;
        acc[j][l] = std::fma(T::at(x, e), T::at(y, e), acc[j][l]);
      }
    }
  }
  for (int l = 0; l < 16; ++l) {
    acc[0][l] += acc[2][l];
    acc[1][l] += acc[3][l];
  }
  for (int l = 0; l < 16; ++l) acc[0][l] += acc[1][l];
  return ggml::reduce16(acc[0]);
}

// tinyBLAS: one 16-lane FMA accumulator, element i in lane i % 16 (n a multiple of 16).
template <class T>
float gemm_lanes(const void* x, const void* y, std::int64_t n) {
  float acc[16] = {};
  for (std::int64_t i = 0; i < n; i += 16) {
    for (int l = 0; l < 16; ++l) acc[l] = std::fma(T::at(x, i + l), T::at(y, i + l), acc[l]);
  }
  return ggml::reduce16(acc);
}

// One step of the pair-dot: fma with denormal operands read as zero and a denormal result
// flushed to zero (keeping its sign), as vdpbf16ps does.
float flush(float v) { return std::fabs(v) < 0x1p-126f ? std::copysign(0.0f, v) : v; }
float pair_step(float acc, float x, float y) { return flush(std::fma(flush(x), flush(y), acc)); }

// acc[j] over the pairs (2j, 2j+1) of the 32 elements from `e`: the odd element first.
void pair_dot32(const void* x, const void* y, std::int64_t e, float acc[16]) {
  for (int j = 0; j < 16; ++j) {
    acc[j] = pair_step(acc[j], BF16::at(x, e + 2 * j + 1), BF16::at(y, e + 2 * j + 1));
    acc[j] = pair_step(acc[j], BF16::at(x, e + 2 * j), BF16::at(y, e + 2 * j));
  }
}

// ggml_vec_dot_f32's leftovers, GCC 12's vectorization of `sumf += x[i]*y[i]` (float sumf): blocks
// of 16, then one of 8, of rounded products added in element order; the last tail % 8 elements
// through a contracted scalar loop (one FMA each).
float tail_f32(const float* x, const float* y, std::int64_t n, float sum) {
  const std::int64_t unfused = n & ~std::int64_t{7};
  for (std::int64_t i = 0; i < unfused; ++i) {
    const float p = x[i] * y[i];
    sum += p;
  }
  for (std::int64_t i = unfused; i < n; ++i) sum = std::fma(x[i], y[i], sum);
  return sum;
}

}  // namespace

float dot_f32(const void* w, const void* a, std::int64_t n) {
  const std::int64_t np = n - n % 64;
  const float sum = vec_lanes<F32>(w, a, np);
  return tail_f32(static_cast<const float*>(w) + np, static_cast<const float*>(a) + np, n - np, sum);
}

float dot_f32_batched(const void* w, const void* a, std::int64_t n) {
  return n % 16 == 0 ? gemm_lanes<F32>(w, a, n) : dot_f32(w, a, n);
}

float dot_f16(const void* w, const void* a, std::int64_t n) {
  const std::int64_t np = n - n % 64;
  double sum = vec_lanes<F16>(w, a, np);
  for (std::int64_t i = np; i < n; ++i) {
    const float p = F16::at(w, i) * F16::at(a, i);
    sum += static_cast<double>(p);
  }
  return static_cast<float>(sum);
}

float dot_f16_batched(const void* w, const void* a, std::int64_t n) {
  return n % 16 == 0 ? gemm_lanes<F16>(w, a, n) : dot_f16(w, a, n);
}

float dot_bf16(const void* w, const void* a, std::int64_t n) {
  const std::int64_t np = n - n % 64;
  float c1[16] = {}, c2[16] = {};
  for (std::int64_t i = 0; i < np; i += 64) {
    pair_dot32(w, a, i, c1);
    pair_dot32(w, a, i + 32, c2);
  }
  double sum = 0.0;
  sum += static_cast<double>(ggml::reduce16(c1));
  sum += static_cast<double>(ggml::reduce16(c2));
  for (std::int64_t i = np; i < n; ++i) {
    const float p = BF16::at(w, i) * BF16::at(a, i);  // a plain multiply: no flushing here
    sum += static_cast<double>(p);
  }
  return static_cast<float>(sum);
}

float dot_bf16_batched(const void* w, const void* a, std::int64_t n) {
  if (n % 32 != 0) return dot_bf16(w, a, n);
  float acc[16] = {};
  for (std::int64_t i = 0; i < n; i += 32) pair_dot32(w, a, i, acc);
  return ggml::reduce16(acc);
}

// ---- wisp's own order (x86/float_tiles-inl.h) ----

namespace {

template <class T>
float lanes8(const void* w, const void* a, std::int64_t n) {
  const auto* y = static_cast<const float*>(a);
  float acc[8] = {};
  const std::int64_t padded = (n + 7) / 8 * 8;
  for (std::int64_t i = 0; i < padded; ++i) {
    const float wi = i < n ? T::at(w, i) : 0.0f;
    const float ai = i < n ? y[i] : 0.0f;
    acc[i % 8] = std::fma(wi, ai, acc[i % 8]);
  }
  return ggml::hsum8(acc);  // the same fold as x86::hsum8
}

}  // namespace

float dot_f32_lanes8(const void* w, const void* a, std::int64_t n) { return lanes8<F32>(w, a, n); }
float dot_f16_lanes8(const void* w, const void* a, std::int64_t n) { return lanes8<F16>(w, a, n); }
float dot_bf16_lanes8(const void* w, const void* a, std::int64_t n) { return lanes8<BF16>(w, a, n); }

}  // namespace wisp::kernels::scalar
