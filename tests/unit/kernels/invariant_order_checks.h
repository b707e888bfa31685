// What the tests of wisp's own dot orders (test_blocks8_dots, test_kquant_super8, test_float_gemm)
// share: the check that an ISA's one-token kernel gives its scalar form's bits, and the normalized
// error |y - exact| / sum |w_i a_i| of the numerics contract (src/kernels/README.md), tracked next
// to llama.cpp's order's on the same data.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <random>
#include <vector>

#include "formats/block_types.h"
#include "kernels/dot.h"
#include "random_blocks.h"

namespace wisp::test {

// For each row length: every activation row `act_rows(n)` gives against every adversarial weight
// row of `type` (random_blocks.h) the same bits from `fast` as from `scalar_form`.
inline void expect_same_bits_as_scalar_form(
    GgmlType type, const char* isa, kernels::DotFn fast, kernels::DotFn scalar_form,
    std::initializer_list<std::int64_t> lengths,
    const std::function<std::vector<std::vector<std::uint8_t>>(std::int64_t)>& act_rows, std::mt19937& rng) {
  for (std::int64_t n : lengths) {
    for (const auto& a : act_rows(n)) {
      for (const auto& w : adversarial_weights(type, n, rng)) {
        const float got = fast(w.data(), a.data(), n);
        const float want = scalar_form(w.data(), a.data(), n);
        ASSERT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
            << block_type(type).name << " " << isa << " n=" << n << ": " << got << " vs " << want;
      }
    }
  }
}

// The worst normalized error of wisp's order and of llama.cpp's over the outputs of one row length.
struct NormalizedErrors {
  double worst = 0.0, worst_llama = 0.0;

  void add(double wisp, double llama, double exact, double magnitude) {
    worst = std::max(worst, std::abs(wisp - exact) / magnitude);
    worst_llama = std::max(worst_llama, std::abs(llama - exact) / magnitude);
  }
  // Prints both (the README's measured figures come from these lines) and checks wisp's bound.
  void expect_within(const char* type_name, std::int64_t n, double bound) const {
    std::printf("  %s n=%lld: normalized error wisp %.2e, llama.cpp order %.2e\n", type_name, static_cast<long long>(n),
                worst, worst_llama);
    EXPECT_LE(worst, bound) << type_name << " n=" << n;
  }
};

}  // namespace wisp::test
