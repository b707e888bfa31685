// wisp's own dot order for the 4-bit codebook types IQ4_NL, MXFP4 and IQ4_XS
// (DotKernel::dot_invariant, kernels/dot_codebook8.cpp):
//  - every SIMD one-token kernel equals its scalar form bit for bit (random and adversarial
//    weights, quantized activations and raw codes over the whole int8 range, rows of 1 .. 130
//    blocks or 1 .. 33 super-blocks: every tail of the 8-block groups), on each x86 ISA this CPU
//    runs;
//  - each ISA's prefill GEMM gives its one-token kernel's bits (batch invariance);
//  - the order's accuracy against the exact value (double precision over the same quantized
//    weights and activations), as a normalized error |y - exact| / sum |w_i a_i| per output, next
//    to the llama.cpp order's on the same data: the numerics contract of src/kernels/README.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "kernels/multi_dots.h"
#include "gemm_bit_checks.h"
#include "invariant_order_checks.h"
#include "random_blocks.h"

namespace wisp {
namespace {

using kernels::ActFormat;
using kernels::DotFn;

constexpr GgmlType kTypes[] = {GgmlType::kIQ4_NL, GgmlType::kMXFP4, GgmlType::kIQ4_XS};

DotFn scalar_form(GgmlType t) {
  switch (t) {
    case GgmlType::kIQ4_NL: return kernels::scalar::dot_iq4_nl_blocks8;
    case GgmlType::kMXFP4: return kernels::scalar::dot_mxfp4_blocks8;
    case GgmlType::kIQ4_XS: return kernels::scalar::dot_iq4_xs_super8;
    default: return nullptr;
  }
}

ActFormat act_of(GgmlType t) { return t == GgmlType::kIQ4_XS ? ActFormat::kQ8_K : ActFormat::kQ8_0Split; }

// MXFP4 blocks with exponents near 2^0 (random bytes reach 2^127, whose products overflow).
void moderate_exponents(GgmlType type, std::vector<std::uint8_t>& w, std::mt19937& rng) {
  if (type != GgmlType::kMXFP4) return;
  for (std::size_t off = 0; off < w.size(); off += sizeof(BlockMXFP4))
    w[off] = static_cast<std::uint8_t>(118 + rng() % 16);
}

// Split rows: from the quantizer (normal values, a constant, tiny values with one outlier), and
// raw codes (random over the whole int8 range, and all +-127) with random scales and their sums.
std::vector<std::vector<std::uint8_t>> split_rows(std::int64_t n, std::mt19937& rng, bool with_raw) {
  std::vector<std::vector<std::uint8_t>> out = test::activation_rows(ActFormat::kQ8_0Split, n, rng);
  if (with_raw) test::append_raw_split_rows(out, n, rng, -128);
  return out;
}

std::vector<std::vector<std::uint8_t>> act_rows(GgmlType type, std::int64_t n, std::mt19937& rng) {
  return type == GgmlType::kIQ4_XS ? test::activation_rows(ActFormat::kQ8_K, n, rng) : split_rows(n, rng, true);
}

std::initializer_list<std::int64_t> lengths(GgmlType type) {
  static constexpr std::initializer_list<std::int64_t> kBlocks = {32, 64, 96, 224, 256, 288, 480, 512, 544, 2048, 4160};
  static constexpr std::initializer_list<std::int64_t> kSuper = {1 * kQK_K, 2 * kQK_K,  7 * kQK_K,  8 * kQK_K,
                                                                 9 * kQK_K, 16 * kQK_K, 17 * kQK_K, 33 * kQK_K};
  return type == GgmlType::kIQ4_XS ? kSuper : kBlocks;
}

class Codebook8Isa : public ::testing::TestWithParam<Isa> {};

TEST_P(Codebook8Isa, EqualsItsScalarFormBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(41);
  for (GgmlType type : kTypes) {
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    ASSERT_NE(k, nullptr);
    ASSERT_NE(k->dot_invariant, nullptr) << block_type(type).name << ": no " << isa_name(isa) << " kernel";
    ASSERT_EQ(k->act_invariant, act_of(type));
    test::expect_same_bits_as_scalar_form(
        type, isa_name(isa), k->dot_invariant, scalar_form(type), lengths(type),
        [&](std::int64_t n) { return act_rows(type, n, rng); }, rng);
  }
}

// The prefill GEMM of each ISA (MultiDot::gemm8: 8 rows per call on AVX2, 16 with AVX-512 VNNI)
// against that ISA's own one-token kernel, the one the matmul calls for decode: every output
// bit-identical (batch invariance), over 17 rows (chunks of 16 + 1 or 8 + 8 + 1, so both halves
// of a zmm and a one-row chunk are checked, and nothing is written past a chunk), token counts in
// and beside the GEMM's groups of four, rows of one block to groups plus a tail, edge scales and
// all-0x00/0xff codes, and activations from the quantizer (codes in [-127, 127], its range).
TEST_P(Codebook8Isa, GemmEqualsThisIsasOneTokenKernelBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(4321);
  for (GgmlType type : kTypes) {
    const auto id = static_cast<std::uint32_t>(type);
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(id, isa);
    ASSERT_NE(k, nullptr);
    const kernels::MultiDot* m = test::invariant_multi_dot(isa, id);
    ASSERT_TRUE(m != nullptr && m->gemm8 != nullptr) << block_type(type).name << ": no " << isa_name(isa) << " GEMM";
    const std::int64_t blk = block_type(type).block_elems;
    for (std::int64_t blocks : {1, 8, 9, 17}) {
      const std::int64_t n = blocks * blk;
      const std::size_t row_bytes = block_type(type).row_bytes(n);
      std::vector<std::uint8_t> w;
      for (auto r : test::adversarial_weights(type, n, rng)) {
        moderate_exponents(type, r, rng);
        w.insert(w.end(), r.begin(), r.end());
      }
      auto more = test::random_matrix(type, 11, n, rng);
      moderate_exponents(type, more, rng);
      w.insert(w.end(), more.begin(), more.end());  // 17 rows
      const std::int64_t n_rows = static_cast<std::int64_t>(w.size() / row_bytes);
      std::vector<std::uint8_t> a;
      for (int rep = 0; rep < 3; ++rep) {
        auto rows =
            type == GgmlType::kIQ4_XS ? test::activation_rows(ActFormat::kQ8_K, n, rng) : split_rows(n, rng, false);
        if (type == GgmlType::kIQ4_XS) rows.pop_back();  // raw codes reach -128, outside the quantizer's range
        for (const auto& r : rows) a.insert(a.end(), r.begin(), r.end());
      }
      const std::size_t a_stride = kernels::act_row_bytes(act_of(type), n);
      const auto n_act = static_cast<std::int64_t>(a.size() / a_stride);  // 9 tokens
      ASSERT_NO_FATAL_FAILURE(test::expect_gemm_equals_one_token_kernel(
          std::string(block_type(type).name) + " " + isa_name(isa), *m, *k,
          {w.data(), row_bytes, n_rows, a.data(), a_stride, n}, {n_act, 7, 4, 1}, /*y_stride=*/17,
          /*scratch_offset=*/1));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(X86, Codebook8Isa, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(isa_name(info.param)); });
// Both NEON bundles under qemu (tests/arm): the one-token kernels against the scalar forms, and the
// 8-row GEMMs against the one-token kernels.
INSTANTIATE_TEST_SUITE_P(Arm, Codebook8Isa, ::testing::Values(Isa::kNeon, Isa::kNeonDotprod), [](const auto& info) {
  return std::string(info.param == Isa::kNeon ? "neon" : "neon_dotprod");
});

// The numerics contract per matmul: over random matrices at the real models' row lengths, the
// largest normalized error of wisp's order stays within 2e-6 (llama.cpp's one-token order, measured
// on the same data, is printed beside it; both are float rounding of the same exact integer sums).
TEST(Codebook8, NormalizedErrorAgainstTheExactValueIsBounded) {
  std::mt19937 rng(2026);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (GgmlType type : kTypes) {
    const BlockTypeInfo& info = block_type(type);
    const kernels::DotKernel* ref = kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(type));
    ASSERT_NE(ref, nullptr);
    for (std::int64_t n : {576, 1536, 2048, 8192}) {
      if (n % info.block_elems != 0) continue;
      const std::int64_t rows = 64;
      auto w = test::random_matrix(type, rows, n, rng);
      moderate_exponents(type, w, rng);
      std::vector<float> x(static_cast<std::size_t>(n));
      for (auto& v : x) v = normal(rng);
      x[7] = 30.0f;  // an outlier channel, as real activations have
      std::vector<std::uint8_t> q8(kernels::act_row_bytes(ref->act, n)),
          fast_act(kernels::act_row_bytes(act_of(type), n));
      kernels::convert_act_row(ref->act, x.data(), q8.data(), n);
      kernels::convert_act_row(act_of(type), x.data(), fast_act.data(), n);
      // The activation values both orders multiply (the same codes and scales in both formats).
      std::vector<double> av(static_cast<std::size_t>(n));
      if (type == GgmlType::kIQ4_XS) {
        const auto* y = reinterpret_cast<const kernels::BlockQ8_K*>(q8.data());
        for (std::int64_t i = 0; i < n; ++i) av[i] = static_cast<double>(y[i / kQK_K].d) * y[i / kQK_K].qs[i % kQK_K];
      } else {
        const kernels::Q8_0SplitRow s = kernels::q8_0_split_row(fast_act.data(), n);
        for (std::int64_t i = 0; i < n; ++i) av[i] = static_cast<double>(s.d[i / 32]) * s.qs[i];
      }
      std::vector<float> wrow(static_cast<std::size_t>(n));
      test::NormalizedErrors errors;
      for (std::int64_t r = 0; r < rows; ++r) {
        const std::uint8_t* wr = w.data() + static_cast<std::size_t>(r) * info.row_bytes(n);
        info.dequantize(wr, wrow.data(), n);  // exact: a scale times a small integer
        double exact = 0.0, magnitude = 0.0;
        for (std::int64_t i = 0; i < n; ++i) {
          exact += wrow[i] * av[i];
          magnitude += std::abs(wrow[i] * av[i]);
        }
        const double fast = scalar_form(type)(wr, fast_act.data(), n);
        const double llama = ref->dot(wr, q8.data(), n);
        errors.add(fast, llama, exact, magnitude);
      }
      errors.expect_within(info.name, n, 2e-6);
    }
  }
}

}  // namespace
}  // namespace wisp
