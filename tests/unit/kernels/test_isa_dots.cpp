// Every SIMD dot kernel (each ISA path this CPU can run) against the scalar reference, for bit
// equality: the kernels keep the reference's float order, so "close" would hide a lane-order bug
// that later flips a token. Random and adversarial weights (all-zero and all-one bytes, extreme
// codes, zero/subnormal/largest scales), activations from the quantizers and raw adversarial codes
// (-128 included), and rows of 1, 2, 3 and many blocks (tails of every unroll, and long rows).
#include <gtest/gtest.h>

#include <bit>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "random_blocks.h"

namespace wisp {
namespace {

using kernels::ActFormat;
using kernels::DotFn;
using kernels::DotKernel;

constexpr GgmlType kTypes[] = {GgmlType::kQ4_0, GgmlType::kQ4_1, GgmlType::kQ5_0, GgmlType::kQ5_1,
                               GgmlType::kQ8_0, GgmlType::kQ4_K, GgmlType::kQ6_K};

// Activation rows: quantized from floats (normal, all-equal, one huge outlier) and raw codes.
std::vector<std::vector<std::uint8_t>> activations(ActFormat f, std::int64_t n, std::mt19937& rng) {
  std::vector<std::vector<std::uint8_t>> out;
  const std::size_t bytes = kernels::act_row_bytes(f, n);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> floats(3, std::vector<float>(static_cast<std::size_t>(n)));
  for (auto& v : floats[0]) v = normal(rng);
  for (auto& v : floats[1]) v = -0.75f;
  for (auto& v : floats[2]) v = normal(rng) * 1e-3f;
  floats[2][static_cast<std::size_t>(n / 2)] = 1e4f;
  for (const auto& x : floats) {
    out.emplace_back(bytes);
    kernels::convert_act_row(f, x.data(), out.back().data(), n);
  }
  // Raw codes over the whole int8 range (-128 too), moderate scales, consistent Q8_K bsums.
  std::vector<std::uint8_t> raw(bytes);
  std::uniform_int_distribution<int> byte(0, 255);
  for (auto& b : raw) b = static_cast<std::uint8_t>(byte(rng));
  if (f == ActFormat::kQ8_0 || f == ActFormat::kQ8_1) {
    const std::size_t block = f == ActFormat::kQ8_0 ? sizeof(BlockQ8_0) : sizeof(kernels::BlockQ8_1);
    const int halves = f == ActFormat::kQ8_0 ? 1 : 2;
    for (std::size_t b = 0; b < bytes / block; ++b) {
      for (int h = 0; h < halves; ++h) {
        const std::uint16_t v = f32_to_f16(0.01f * static_cast<float>(h + 1));
        std::memcpy(raw.data() + b * block + 2 * h, &v, 2);
      }
    }
  } else {
    auto* y = reinterpret_cast<kernels::BlockQ8_K*>(raw.data());
    for (std::int64_t b = 0; b < n / kQK_K; ++b) {
      y[b].d = 0.02f;
      for (int g = 0; g < 16; ++g) {
        int s = 0;
        for (int j = 0; j < 16; ++j) s += y[b].qs[16 * g + j];
        y[b].bsums[g] = static_cast<std::int16_t>(s);
      }
    }
  }
  out.push_back(std::move(raw));
  return out;
}

// Weight rows: random (scales moderate), code bytes all 0x00 and all 0xff with the scales kept, and
// random codes under edge scales (zero, subnormal, the largest half, either sign).
std::vector<std::vector<std::uint8_t>> weights(GgmlType type, std::int64_t n, std::mt19937& rng) {
  std::vector<std::vector<std::uint8_t>> out;
  for (int i = 0; i < 3; ++i) out.push_back(test::random_matrix(type, 1, n, rng));
  const BlockTypeInfo& info = block_type(type);
  const auto fields = test::half_fields(type);
  {
    constexpr std::uint16_t kEdge[] = {0x0000, 0x0001, 0x03ff, 0x7bff, 0x8001, 0xfbff, 0x3c00, 0x8000};
    std::vector<std::uint8_t> w = test::random_matrix(type, 1, n, rng);
    std::size_t e = 0;
    for (std::size_t blk = 0; blk < w.size() / info.block_bytes; ++blk) {
      for (std::size_t off : fields) std::memcpy(w.data() + blk * info.block_bytes + off, &kEdge[e++ % 8], 2);
    }
    out.push_back(std::move(w));
  }
  for (std::uint8_t fill : {std::uint8_t{0x00}, std::uint8_t{0xff}}) {
    std::vector<std::uint8_t> w = test::random_matrix(type, 1, n, rng);
    for (std::size_t blk = 0; blk < w.size() / info.block_bytes; ++blk) {
      std::uint8_t* p = w.data() + blk * info.block_bytes;
      std::vector<std::uint8_t> keep(p, p + info.block_bytes);
      std::memset(p, fill, info.block_bytes);
      for (std::size_t off : fields) std::memcpy(p + off, keep.data() + off, 2);
    }
    out.push_back(std::move(w));
  }
  return out;
}

void expect_same_bits(DotFn simd, DotFn ref, const char* what, const std::vector<std::uint8_t>& w,
                      const std::vector<std::uint8_t>& a, std::int64_t n) {
  if (simd == ref) return;
  const float got = simd(w.data(), a.data(), n);
  const float want = ref(w.data(), a.data(), n);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(got), std::bit_cast<std::uint32_t>(want))
      << what << " n=" << n << ": " << got << " vs " << want;
}

class IsaDots : public ::testing::TestWithParam<Isa> {};

TEST_P(IsaDots, EveryVariantEqualsScalarBitForBit) {
  const Isa isa = GetParam();
  if (!isa_supported(isa, detect_cpu_features())) GTEST_SKIP() << isa_name(isa) << " not on this CPU";
  std::mt19937 rng(1234);
  for (GgmlType type : kTypes) {
    const DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(type), isa);
    const DotKernel* s = kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(type));
    ASSERT_NE(k, nullptr);
    ASSERT_NE(s, nullptr);
    EXPECT_STREQ(k->isa, isa_name(isa)) << block_type(type).name;
    EXPECT_NE(k->dot, s->dot) << block_type(type).name << ": no " << isa_name(isa) << " kernel to test";
    const std::int64_t block = kernels::act_block_elems(k->act);
    // 130 blocks: a long row (33280 values of a K-quant, as in a large model's FFN).
    for (std::int64_t blocks : {1, 2, 3, 7, 18, 130}) {
      const std::int64_t n = blocks * block;
      for (const auto& a : activations(k->act, n, rng)) {
        for (const auto& w : weights(type, n, rng)) {
          const std::string name = std::string(block_type(type).name) + " " + isa_name(isa);
          expect_same_bits(k->dot, s->dot, (name + " one-token").c_str(), w, a, n);
          if (k->dot_batched) expect_same_bits(k->dot_batched, s->dot_batched, (name + " batched").c_str(), w, a, n);
          if (k->dot_repacked) expect_same_bits(k->dot_repacked, s->dot_repacked, (name + " repacked").c_str(), w, a, n);
          if (k->dot_repacked_x4) {
            expect_same_bits(k->dot_repacked_x4, s->dot_repacked_x4, (name + " repacked-x4").c_str(), w, a, n);
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(X86, IsaDots, ::testing::Values(Isa::kAvx2, Isa::kAvx512),
                         [](const auto& info) { return std::string(isa_name(info.param)); });
// AArch64 (cross-built and run under qemu-aarch64 by tests/arm/): plain NEON and NEON with SDOT.
INSTANTIATE_TEST_SUITE_P(Arm, IsaDots, ::testing::Values(Isa::kNeon, Isa::kNeonDotprod), [](const auto& info) {
  return info.param == Isa::kNeon ? std::string("neon") : std::string("neon_dotprod");
});

TEST(IsaDots, ScalarIsAlwaysAvailableAndForcedPathsResolve) {
  EXPECT_TRUE(isa_supported(Isa::kScalar, detect_cpu_features()));
  EXPECT_EQ(parse_isa("avx2"), Isa::kAvx2);
  EXPECT_EQ(parse_isa("neon"), Isa::kNeon);
  EXPECT_EQ(parse_isa("neon-dotprod"), Isa::kNeonDotprod);
  EXPECT_EQ(parse_isa("sve"), std::nullopt);
  const DotKernel* k = kernels::find_dot_kernel_for(static_cast<std::uint32_t>(GgmlType::kQ4_1), Isa::kScalar);
  ASSERT_NE(k, nullptr);
  EXPECT_STREQ(k->isa, "scalar");
  EXPECT_EQ(k->dot, kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(GgmlType::kQ4_1))->dot);
}

}  // namespace
}  // namespace wisp
