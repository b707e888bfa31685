// The check the integer-type tests (test_blocks8_dots, test_codebook8, test_kquant_super8,
// test_wq_blocks8) share: an ISA's prefill GEMM (MultiDot::gemm8) gives every output the bits of
// that ISA's one-token kernel, whatever the number of tokens (batch invariance), and writes
// nothing past a chunk's rows. Each test builds the weights and activations its types need.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/dot.h"
#include "kernels/multi_dots.h"

namespace wisp::test {

// The batch-invariant MultiDot entry of `isa`'s table for weight type `id` (the last one listed),
// or nullptr.
inline const kernels::MultiDot* invariant_multi_dot(Isa isa, std::uint32_t id) {
  std::size_t n_multi = 0;
  const kernels::MultiDot* multi = kernels::multi_dots_for(isa, &n_multi);
  const kernels::MultiDot* m = nullptr;
  for (std::size_t e = 0; e < n_multi; ++e) {
    if (multi[e].weight_type == id && multi[e].slot == kernels::DotSlot::kInvariant) m = &multi[e];
  }
  return m;
}

// The operands of one check: n_rows weight rows of row_bytes and the activation rows (a_stride
// bytes apart), all of n values.
struct GemmOperands {
  const std::uint8_t* w;
  std::size_t row_bytes;
  std::int64_t n_rows;
  const std::uint8_t* a;
  std::size_t a_stride;
  std::int64_t n;
};

// Runs m.gemm8 over the weight rows in chunks of m.gemm_rows (the last chunk what is left, so a
// row in the wrong lane fails) and, for each of `token_counts`, the first n_tok activation rows,
// into outputs y_stride apart that start as a sentinel; the scratch is handed `scratch_offset`
// bytes into its allocation (off alignment when not 0). Every output must have the bits of
// k.dot_invariant on its row and token, and every output past the chunk's rows the sentinel.
// `what` names the case in a failure. Wrap the call in ASSERT_NO_FATAL_FAILURE to stop the test
// at the first failure.
inline void expect_gemm_equals_one_token_kernel(const std::string& what, const kernels::MultiDot& m,
                                                const kernels::DotKernel& k, const GemmOperands& o,
                                                std::initializer_list<std::int64_t> token_counts, std::int64_t y_stride,
                                                std::size_t scratch_offset) {
  constexpr float kSentinel = -7.0f;
  std::vector<std::uint8_t> scratch(kernels::gemm8_scratch_bytes(o.n, m.gemm_rows) + scratch_offset);
  for (std::int64_t first = 0; first < o.n_rows; first += m.gemm_rows) {
    const int rows = static_cast<int>(std::min<std::int64_t>(m.gemm_rows, o.n_rows - first));
    for (std::int64_t n_tok : token_counts) {
      std::vector<float> y(static_cast<std::size_t>(n_tok * y_stride), kSentinel);
      m.gemm8(o.w + o.row_bytes * static_cast<std::size_t>(first), o.row_bytes, rows, o.a, o.a_stride, n_tok, o.n,
              y.data(), y_stride, scratch.data() + scratch_offset);
      for (std::int64_t t = 0; t < n_tok; ++t) {
        for (int r = 0; r < rows; ++r) {
          const float want = k.dot_invariant(o.w + o.row_bytes * static_cast<std::size_t>(first + r),
                                             o.a + o.a_stride * static_cast<std::size_t>(t), o.n);
          const float got = y[static_cast<std::size_t>(t * y_stride + r)];
          ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
              << what << " n=" << o.n << " row " << first + r << " token " << t << " of " << n_tok << ": " << got
              << " vs " << want;
        }
        for (std::int64_t r = rows; r < y_stride; ++r)
          ASSERT_EQ(y[static_cast<std::size_t>(t * y_stride + r)], kSentinel) << "written past the chunk's rows";
      }
    }
  }
}

}  // namespace wisp::test
