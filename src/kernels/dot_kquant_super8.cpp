// wisp's own order for the K-quants (the scalar form of the x86 dot_invariant kernels in
// x86/kquant_super8_dots-inl.h and of their 8-row GEMM, x86/kquant_super8_gemm-inl.h): not
// llama.cpp's, so not pinned to its bits, but to these functions, which the SIMD kernels reproduce
// exactly; the accuracy of the order against the reference is bounded by tests
// (src/kernels/README.md).
//
// Per super-block b (256 values) of a row, two exact integers: S_b = the sum over its sub-blocks of
// scale * (codes . activation codes) (the codes carry the type's offset, kquant_unpack.h), and
// M_b = the sum of min * (the sub-block's activation code sum) (zero for the types without
// minimums). Lane k = b % 8 takes acc[k] = fma(float(S_b), d_x * d_y, acc[k]) and
// macc[k] = fma(float(M_b), dmin_x * d_y, macc[k]); the result is hsum8(acc - macc) in simd.h's
// hsum8 order.
//
// Why this order: the float work is one lane of a convert and an FMA per super-block instead of
// ggml's 8-lane convert and FMA per super-block (4-value partials), the exact super-block sums come
// out of a vertical reduction when 8 weight rows sit in the lanes of a vector (the GEMM), and one
// output's operations do not depend on how many tokens or rows are computed with it.
#include <cmath>
#include <cstdint>

#include "formats/block_layouts.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/kquant_unpack.h"

namespace wisp::kernels::scalar {

namespace {

template <class Block>
float super8(const void* w, const void* a, std::int64_t n) {
  const auto* x = static_cast<const Block*>(w);
  const auto* y = static_cast<const BlockQ8_K*>(a);
  float acc[8] = {}, macc[8] = {};
  KBlock kb;
  for (std::int64_t b = 0; b < n / kQK_K; ++b) {
    unpack_kblock(x[b], kb);
    const KSums s = ksums(kb, y[b].qs);
    const int k = static_cast<int>(b % 8);
    acc[k] = std::fma(static_cast<float>(static_cast<std::int32_t>(s.s1)), kb.d * y[b].d, acc[k]);
    macc[k] = std::fma(static_cast<float>(static_cast<std::int32_t>(s.s2)), kb.dmin * y[b].d, macc[k]);
  }
  float t[8];
  for (int k = 0; k < 8; ++k) t[k] = acc[k] - macc[k];
  // x86::hsum8's order: lanes 4..7 onto 0..3, then {0,2} and {1,3}, then the last pair.
  const float r0 = t[4] + t[0], r1 = t[5] + t[1], r2 = t[6] + t[2], r3 = t[7] + t[3];
  return (r0 + r2) + (r1 + r3);
}

}  // namespace

float dot_q2_k_super8(const void* w, const void* a, std::int64_t n) { return super8<BlockQ2_K>(w, a, n); }
float dot_q3_k_super8(const void* w, const void* a, std::int64_t n) { return super8<BlockQ3_K>(w, a, n); }
float dot_q4_k_super8(const void* w, const void* a, std::int64_t n) { return super8<BlockQ4_K>(w, a, n); }
float dot_q5_k_super8(const void* w, const void* a, std::int64_t n) { return super8<BlockQ5_K>(w, a, n); }
float dot_q6_k_super8(const void* w, const void* a, std::int64_t n) { return super8<BlockQ6_K>(w, a, n); }

}  // namespace wisp::kernels::scalar
