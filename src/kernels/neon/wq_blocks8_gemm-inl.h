// The prefill GEMM of wisp's WQ integer order on NEON (MultiDot::gemm8, up to 8 weight rows per
// call), each output bit-identical to the one-token kernel dot_wq_blocks8 (wq_blocks8_dots-inl.h),
// so batch invariance holds. Compiled into the plain and the SDOT bundle.
//
// Per call the rows' codes are unpacked once (wq_group_codes, as the one-token kernel unpacks them)
// into the scratch tile as the int8 values the dot multiplies (32 bytes per block and row), with
// each block's group scale (half) and zero-point; then every token runs the one-token kernel's
// operations on the unpacked codes: the same block products (wq_block_lanes), the same float step
// (wq_finish) in the same lanes, the same hsum8. Only the unpacking moves out of the token loop.
// The tile is row-major (row r's codes, then its scales and zero-points), 38 bytes per block and
// row within gemm8_scratch_bytes' 48.
#pragma once

#include <arm_neon.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kernels/neon/wq_blocks8_dots-inl.h"

namespace wisp::kernels::neon {
namespace {

constexpr int kWqGemmRows = 8;

template <int B, int G>
void gemm8_wq_blocks8(const void* w, std::size_t w_stride, int n_rows, const void* a, std::size_t a_stride,
                      std::int64_t n_tok, std::int64_t n, float* y, std::int64_t y_stride, void* scratch) {
  constexpr int kRuns = G / 32;
  constexpr std::int64_t kBlock = static_cast<std::int64_t>(wq_block_bytes(B, G));
  const std::int64_t nb = n / 32;
  // The tile, from scratch rounded up to 16 bytes (gemm8_scratch_bytes leaves 32 spare): the
  // zero-points (int32), the scales (half), the codes, each row after row.
  auto* base = reinterpret_cast<std::uint8_t*>((reinterpret_cast<std::uintptr_t>(scratch) + 15) & ~std::uintptr_t{15});
  auto* z = reinterpret_cast<std::int32_t*>(base);
  auto* h = reinterpret_cast<std::uint16_t*>(base + 4 * n_rows * nb);
  auto* codes = reinterpret_cast<std::int8_t*>(base + 6 * n_rows * nb);
  for (int r = 0; r < n_rows; ++r) {
    const auto* row = static_cast<const std::uint8_t*>(w) + static_cast<std::size_t>(r) * w_stride;
    for (std::int64_t g = 0; g < n / G; ++g) {
      const std::uint8_t* hdr = row + g * kBlock;
      const std::uint16_t s = wq_scale_bits(hdr);
      const std::int32_t zg = wq_zero<B>(hdr);
      wq_group_codes<B, G>(hdr, [&](int k, int8x16_t c0, int8x16_t c1) {
        const std::int64_t b = r * nb + g * kRuns + k;
        vst1q_s8(codes + 32 * b, c0);
        vst1q_s8(codes + 32 * b + 16, c1);
        h[b] = s;
        z[b] = zg;
      });
    }
  }
  const std::int64_t full = nb / 8 * 8, left = nb - full;
  for (std::int64_t t = 0; t < n_tok; ++t) {
    const Q8_0SplitRow ya = q8_0_split_row(static_cast<const std::uint8_t*>(a) + t * a_stride, n);
    // The tail step's activation sums and scales, zero past the row (as the one-token kernel's
    // zero-padded copies; its codes past the row are zero, so their block products are 0).
    alignas(16) std::int32_t tsum[8] = {};
    alignas(16) float tyd[8] = {};
    std::copy_n(ya.sum + full, left, tsum);
    std::copy_n(ya.d + full, left, tyd);
    for (int r = 0; r < n_rows; ++r) {
      const std::int8_t* c = codes + 32 * r * nb;
      const std::uint16_t* hr = h + r * nb;
      const std::int32_t* zr = z + r * nb;
      Acc8 acc;
      int32x4_t p[8];
      for (std::int64_t b0 = 0; b0 < full; b0 += 8) {
        for (int k = 0; k < 8; ++k) {
          const std::int64_t b = b0 + k;
          p[k] = wq_block_lanes<B>(vld1q_s8(c + 32 * b), vld1q_s8(c + 32 * b + 16), ya.qs + 32 * b);
        }
        wq_finish(p, hr + b0, zr + b0, ya.sum + b0, ya.d + b0, acc);
      }
      if (left > 0) {
        alignas(16) std::uint16_t th[8] = {};
        alignas(16) std::int32_t tz[8] = {};
        std::copy_n(hr + full, left, th);
        std::copy_n(zr + full, left, tz);
        for (int k = 0; k < 8; ++k) {
          const std::int64_t b = full + k;
          p[k] = k < left ? wq_block_lanes<B>(vld1q_s8(c + 32 * b), vld1q_s8(c + 32 * b + 16), ya.qs + 32 * b)
                          : vdupq_n_s32(0);
        }
        wq_finish(p, th, tz, tsum, tyd, acc);
      }
      y[t * y_stride + r] = hsum8(acc);
    }
  }
}

}  // namespace
}  // namespace wisp::kernels::neon
