// wisp's integer order for its WQ types (formats/wq_format.h) on 8-bit activations: the scalar form
// of the x86 dot_invariant kernels (x86/wq_blocks8_dots-inl.h, x86/wq_blocks8_gemm-inl.h), which
// reproduce it bit for bit. Not the reference: dot_wq.cpp's float dot on F32 activations stays
// that (the --exact path); this order's accuracy against it is bounded by tests.
//
// Activations in ActFormat::kQ8_0Split (Q8_0's codes and scales per 32 values, with the code
// sums). A WQ group of G values covers G / 32 activation blocks. For activation block b of the row
// (group g = b / (G / 32), whose codes are unsigned, q in [0, 2^B - 1]):
//   isum_b = sum_j q_j a_j - z_g * sum_j a_j      (exact in int32: |isum_b| <= 32 * 255 * 127 * 2)
//   acc[b % 8] = fma(float(isum_b), s_g * d_b, acc[b % 8])
// and the result is hsum8(acc). The zero-point leaves through the activation's code sum, so the
// inner loop is a plain unsigned x signed byte dot (vpdpbusd, maddubs), and the float work is one
// lane of a convert, a multiply and an FMA per 32 values: Q4_0's blocks8 order with the scale and
// zero-point of the block's group. float(isum_b) is exact (|isum_b| < 2^24).
#include <array>
#include <cmath>
#include <cstdint>

#include "formats/half.h"
#include "formats/wq_format.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"

namespace wisp::kernels::scalar {

namespace {

// x86::hsum8's order: lanes 4..7 onto 0..3, then {0,2} and {1,3}, then the last pair.
float hsum8(const float (&v)[8]) {
  const float r0 = v[4] + v[0], r1 = v[5] + v[1], r2 = v[6] + v[2], r3 = v[7] + v[3];
  return (r0 + r2) + (r1 + r3);
}

template <int B, int G>
float dot_wq_blocks8(const void* w, const void* a, std::int64_t n) {
  const auto* blocks = static_cast<const std::uint8_t*>(w);
  const Q8_0SplitRow y = q8_0_split_row(a, n);
  constexpr std::int64_t kBlock = static_cast<std::int64_t>(wq_block_bytes(B, G));
  float acc[8] = {};
  std::uint8_t codes[G];
  for (std::int64_t g = 0; g < n / G; ++g) {
    const std::uint8_t* blk = blocks + g * kBlock;
    const float s = f16_to_f32(static_cast<std::uint16_t>(blk[0] | (blk[1] << 8)));
    const int z = blk[2];
    wq_unpack_codes(blk + kWqHeaderBytes, B, G, codes);
    for (int k = 0; k < G / 32; ++k) {
      const std::int64_t b = g * (G / 32) + k;
      std::int32_t dot = 0;
      for (int j = 0; j < 32; ++j) dot += codes[32 * k + j] * y.qs[32 * b + j];
      const std::int32_t isum = dot - z * y.sum[b];
      acc[b % 8] = std::fma(static_cast<float>(isum), s * y.d[b], acc[b % 8]);
    }
  }
  return hsum8(acc);
}

template <int B>
constexpr std::array<DotFn, 3> forms_of() {
  return {dot_wq_blocks8<B, 32>, dot_wq_blocks8<B, 64>, dot_wq_blocks8<B, 128>};
}

}  // namespace

DotFn dot_wq_blocks8_form(std::uint32_t type_id) {
  static constexpr std::array<std::array<DotFn, 3>, 6> kForms = {forms_of<2>(), forms_of<3>(), forms_of<4>(),
                                                                 forms_of<5>(), forms_of<6>(), forms_of<8>()};
  const WqFormat f = wq_format(type_id);
  if (f.bits == 0) return nullptr;
  const int bi = f.bits == 8 ? 5 : f.bits - 2;
  const int gi = f.group == 32 ? 0 : f.group == 64 ? 1 : 2;
  return kForms[static_cast<std::size_t>(bi)][static_cast<std::size_t>(gi)];
}

}  // namespace wisp::kernels::scalar
