// wisp's integer order for its WQ types (DotKernel::dot_invariant, kernels/dot_wq_blocks8.cpp):
//  - every one-token kernel (x86: AVX2, AVX-512; AArch64: NEON, NEON + SDOT, run under qemu by
//    tests/arm) equals the scalar form bit for bit, for every bit-width and group size FORMAT.md
//    defines, rows of 1 .. 17 groups (every tail of the 8-block steps), random and extreme weights
//    (all codes at the largest value with z = 0, all 0 with z at the largest code, edge scales),
//    activations from the quantizer and raw codes at its bounds (+-127);
//  - each ISA's prefill GEMM gives that ISA's one-token bits over 17 rows (both halves of a zmm,
//    chunks of 8 and a one-row chunk), and the matmul gives every token the one-token bits
//    whatever the batch (batch invariance);
//  - the order's normalized error |y - exact| / sum |w_i a_i| against the exact dot of the same
//    quantized weights and activations is bounded (src/kernels/README.md's numerics contract).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "formats/block_types.h"
#include "formats/wq_format.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/matmul.h"
#include "kernels/multi_dots.h"
#include "gemm_bit_checks.h"
#include "random_blocks.h"
#include "random_wq.h"

namespace wisp {
namespace {

using kernels::ActFormat;

// Split activation rows of n values: from the quantizer (normal, constant, tiny with an outlier)
// and raw codes in [-127, 127] (random, all +127, all -127) with their sums.
std::vector<std::vector<std::uint8_t>> split_rows(std::int64_t n, std::mt19937& rng) {
  auto out = test::activation_rows(ActFormat::kQ8_0Split, n, rng);
  test::append_raw_split_rows(out, n, rng);
  return out;
}

bool same_bits(float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b); }

class WqBlocks8Isa : public ::testing::TestWithParam<Isa> {};

TEST_P(WqBlocks8Isa, EqualsItsScalarFormBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(1041);
  for (int bits : kWqBits) {
    for (int group : kWqGroups) {
      const std::uint32_t id = wq_type_id(bits, group);
      const std::string name = wq_type_name(bits, group);
      const kernels::DotKernel* k = kernels::find_dot_kernel_for(id, isa);
      ASSERT_NE(k, nullptr);
      ASSERT_NE(k->dot_invariant, nullptr) << name << ": no " << isa_name(isa) << " kernel";
      ASSERT_EQ(k->act_invariant, ActFormat::kQ8_0Split);
      const kernels::DotFn form = kernels::scalar::dot_wq_blocks8_form(id);
      ASSERT_NE(form, nullptr);
      for (std::int64_t groups : {1, 2, 3, 4, 7, 8, 9, 17}) {
        const std::int64_t n = groups * group;
        for (const auto& a : split_rows(n, rng)) {
          for (const auto& w : test::wq_weights(bits, group, n, rng)) {
            const float got = k->dot_invariant(w.data(), a.data(), n);
            const float want = form(w.data(), a.data(), n);
            ASSERT_TRUE(same_bits(got, want))
                << name << " " << isa_name(isa) << " n=" << n << ": " << got << " vs " << want;
          }
        }
      }
    }
  }
}

// MultiDot::gemm8 of the WQ types (8 rows on AVX2 and NEON, 16 with AVX-512 VNNI) against this ISA's own
// one-token kernel: 17 rows (chunks 16 + 1 or 8 + 8 + 1), token counts in and beside the groups of
// four, nothing written past the chunk's rows, a scratch pointer off alignment.
TEST_P(WqBlocks8Isa, GemmEqualsThisIsasOneTokenKernelBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(4141);
  for (int bits : kWqBits) {
    for (int group : kWqGroups) {
      const std::uint32_t id = wq_type_id(bits, group);
      const std::string name = wq_type_name(bits, group);
      const kernels::DotKernel* k = kernels::find_dot_kernel_for(id, isa);
      ASSERT_NE(k, nullptr);
      const kernels::MultiDot* m = test::invariant_multi_dot(isa, id);
      ASSERT_TRUE(m != nullptr && m->gemm8 != nullptr) << name << ": no " << isa_name(isa) << " GEMM";
      for (std::int64_t groups : {1, 3, 8, 9}) {
        const std::int64_t n = groups * group;
        const std::size_t row_bytes = wq_block_bytes(bits, group) * static_cast<std::size_t>(groups);
        std::vector<std::uint8_t> w;
        while (w.size() < 17 * row_bytes) {
          for (const auto& r : test::wq_weights(bits, group, n, rng)) w.insert(w.end(), r.begin(), r.end());
        }
        w.resize(17 * row_bytes);
        std::vector<std::uint8_t> a;
        // First a full group of the 16-row GEMM (8 tokens) of random rows, so that a slip at any
        // token position of a group shows, then the edge rows.
        for (int t = 0; t < 8; ++t) {
          const auto r = test::activation_rows(ActFormat::kQ8_0Split, n, rng)[0];
          a.insert(a.end(), r.begin(), r.end());
        }
        for (int rep = 0; rep < 2; ++rep) {
          for (const auto& r : split_rows(n, rng)) a.insert(a.end(), r.begin(), r.end());
        }
        const std::size_t a_stride = kernels::act_row_bytes(ActFormat::kQ8_0Split, n);
        const auto n_act = static_cast<std::int64_t>(a.size() / a_stride);  // 20 tokens
        ASSERT_NO_FATAL_FAILURE(test::expect_gemm_equals_one_token_kernel(
            name + " " + isa_name(isa), *m, *k, {w.data(), row_bytes, 17, a.data(), a_stride, n},
            {n_act, 12, 8, 7, 4, 1},
            /*y_stride=*/17, /*scratch_offset=*/1));
      }
    }
  }
}

// Each suite skips the ISAs this CPU lacks (x86 runs X86's, the qemu builds Arm's).
const auto isa_test_name = [](const auto& info) {
  std::string s = isa_name(info.param);
  std::replace(s.begin(), s.end(), '-', '_');
  return s;
};
INSTANTIATE_TEST_SUITE_P(X86, WqBlocks8Isa, ::testing::Values(Isa::kAvx2, Isa::kAvx512), isa_test_name);
INSTANTIATE_TEST_SUITE_P(Arm, WqBlocks8Isa, ::testing::Values(Isa::kNeon, Isa::kNeonDotprod), isa_test_name);

// Batch invariance through the matmul (the running bundle): each token's outputs are
// dot_invariant of its own quantized row, alone or in batches of 3, 4, 9 and 17 (the GEMM's
// groups of four and their tails), on 37 rows (chunks of 16 and a tail), two threads.
TEST(WqBlocks8, MatmulGivesEveryTokenItsOneTokenBits) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int bits : {2, 3, 4, 8}) {
    for (int group : kWqGroups) {
      const std::uint32_t id = wq_type_id(bits, group);
      const kernels::DotKernel* k = kernels::find_dot_kernel(id);
      ASSERT_NE(k, nullptr);
      if (k->dot_invariant == nullptr) GTEST_SKIP() << "no WQ integer kernel in the " << k->isa << " bundle";
      const std::int64_t rows = 37, cols = 1152;  // 9 groups of 128: a tail of the 8-block steps
      std::vector<float> wf(static_cast<std::size_t>(rows * cols));
      for (auto& v : wf) v = normal(rng);
      const std::size_t row_bytes = wq_block_bytes(bits, group) * static_cast<std::size_t>(cols / group);
      std::vector<std::uint8_t> wb(row_bytes * rows);
      for (std::int64_t r = 0; r < rows; ++r)
        wq_quantize_row({bits, group}, wf.data() + r * cols, wb.data() + r * row_bytes, cols);
      const kernels::MatrixView w{wb.data(), id, cols, rows, row_bytes};
      constexpr std::int64_t kMaxTok = 17;
      std::vector<float> x(static_cast<std::size_t>(kMaxTok * cols));
      for (auto& v : x) v = normal(rng);
      std::vector<std::vector<std::uint8_t>> acts(kMaxTok);
      for (std::int64_t t = 0; t < kMaxTok; ++t) {
        acts[t].resize(kernels::act_row_bytes(ActFormat::kQ8_0Split, cols));
        kernels::convert_act_row(ActFormat::kQ8_0Split, x.data() + t * cols, acts[t].data(), cols);
      }
      kernels::MatmulScratch scratch;
      ThreadPool pool(2);
      for (std::int64_t n_tok : {1, 3, 4, 9, 17}) {
        std::vector<float> y(static_cast<std::size_t>(n_tok * rows));
        kernels::matmul(w, x.data(), cols, n_tok, y.data(), rows, scratch, pool, kernels::DotOrder::kBatchInvariant);
        for (std::int64_t t = 0; t < n_tok; ++t) {
          for (std::int64_t r = 0; r < rows; ++r) {
            const float want = k->dot_invariant(w.row(r), acts[t].data(), cols);
            ASSERT_TRUE(same_bits(y[t * rows + r], want))
                << wq_type_name(bits, group) << " n_tok " << n_tok << " token " << t << " row " << r;
          }
        }
      }
    }
  }
}

// The numerics contract per matmul, on the scalar form (the bits of every ISA's kernel): over
// quantized random matrices at the real models' row lengths, with an outlier channel, the worst
// normalized error against the exact double-precision dot of the same quantized weights and
// activations stays within 2e-6. The reference order (the float dot on F32 activations) is printed
// beside it against its own exact value.
TEST(WqBlocks8, NormalizedErrorAgainstTheExactValueIsBounded) {
  std::mt19937 rng(2026);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (int bits : kWqBits) {
    for (int group : kWqGroups) {
      const std::uint32_t id = wq_type_id(bits, group);
      const kernels::DotFn form = kernels::scalar::dot_wq_blocks8_form(id);
      const kernels::DotKernel* ref = kernels::find_scalar_dot_kernel(id);
      ASSERT_NE(ref, nullptr);
      for (std::int64_t n : {576, 1536, 2048, 8192}) {
        if (n % group != 0) continue;
        const std::size_t row_bytes = wq_block_bytes(bits, group) * static_cast<std::size_t>(n / group);
        std::vector<float> x(static_cast<std::size_t>(n)), wf(static_cast<std::size_t>(n)), wd(wf.size());
        for (auto& v : x) v = normal(rng);
        x[7] = 30.0f;  // an outlier channel, as real activations have
        std::vector<std::uint8_t> act(kernels::act_row_bytes(ActFormat::kQ8_0Split, n)), wb(row_bytes);
        kernels::convert_act_row(ActFormat::kQ8_0Split, x.data(), act.data(), n);
        const kernels::Q8_0SplitRow s = kernels::q8_0_split_row(act.data(), n);
        double worst = 0.0, worst_ref = 0.0;
        for (int r = 0; r < 32; ++r) {
          for (auto& v : wf) v = normal(rng) * 0.02f;
          wq_quantize_row({bits, group}, wf.data(), wb.data(), n);
          wq_dequantize_row({bits, group}, wb.data(), wd.data(), n);  // exact: a half times a small integer
          double exact = 0.0, magnitude = 0.0, exact_f32 = 0.0, magnitude_f32 = 0.0;
          for (std::int64_t i = 0; i < n; ++i) {
            const double av = static_cast<double>(s.d[i / 32]) * s.qs[i];
            exact += wd[i] * av;
            magnitude += std::abs(wd[i] * av);
            exact_f32 += static_cast<double>(wd[i]) * x[i];
            magnitude_f32 += std::abs(static_cast<double>(wd[i]) * x[i]);
          }
          const double fast = form(wb.data(), act.data(), n);
          const double reference = ref->dot(wb.data(), x.data(), n);
          worst = std::max(worst, std::abs(fast - exact) / magnitude);
          worst_ref = std::max(worst_ref, std::abs(reference - exact_f32) / magnitude_f32);
        }
        std::printf("  %s n=%lld: normalized error integer order %.2e, reference float order %.2e\n",
                    wq_type_name(bits, group).c_str(), static_cast<long long>(n), worst, worst_ref);
        EXPECT_LE(worst, 2e-6) << wq_type_name(bits, group) << " n=" << n;
      }
    }
  }
}

}  // namespace
}  // namespace wisp
