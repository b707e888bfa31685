// The x86 kernels added after the first SIMD round (Q2_K, Q3_K, Q5_K; the float types; wisp's WQ
// types; activation quantization) against their scalar references, for bit equality (the float
// order is the reference's, so "close" would hide a lane-order bug). Each ISA this CPU runs is
// tested; weights are random and adversarial (all-zero and all-0xff code bytes, edge scales:
// zero, subnormal, largest half, either sign), activations come from the quantizers (normal,
// all-equal, one huge outlier) and as raw codes over the whole int8 range, and rows run from one
// block to long rows.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/half.h"
#include "formats/wq_format.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"
#include "random_blocks.h"
#include "random_wq.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using kernels::ActFormat;
using kernels::DotFn;
using kernels::DotKernel;

constexpr Isa kX86[] = {Isa::kAvx2, Isa::kAvx512};

bool runs(Isa isa) { return isa_supported(isa, detect_cpu_features()); }

::testing::AssertionResult same_bits(DotFn simd, DotFn ref, const void* w, const void* a, std::int64_t n) {
  const float got = simd(w, a, n);
  const float want = ref(w, a, n);
  if (std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(want)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "n=" << n << ": " << got << " vs scalar " << want;
}

TEST(X86Kernels, NewKQuantsEqualScalarBitForBit) {
  std::mt19937 rng(99);
  for (Isa isa : kX86) {
    if (!runs(isa)) continue;
    for (GgmlType type : {GgmlType::kQ2_K, GgmlType::kQ3_K, GgmlType::kQ5_K}) {
      const auto id = static_cast<std::uint32_t>(type);
      const DotKernel* k = kernels::find_dot_kernel_for(id, isa);
      const DotKernel* s = kernels::find_scalar_dot_kernel(id);
      ASSERT_NE(k, nullptr);
      ASSERT_NE(k->dot, s->dot) << block_type(type).name << ": no " << isa_name(isa) << " kernel";
      ASSERT_NE(k->dot_batched, s->dot_batched) << block_type(type).name << ": no " << isa_name(isa) << " tiled kernel";
      for (std::int64_t blocks : {1, 2, 3, 9, 130}) {
        const std::int64_t n = blocks * kQK_K;
        for (const auto& a : test::activation_rows(ActFormat::kQ8_K, n, rng)) {
          for (const auto& w : test::adversarial_weights(type, n, rng)) {
            EXPECT_TRUE(same_bits(k->dot, s->dot, w.data(), a.data(), n))
                << block_type(type).name << " " << isa_name(isa);
            EXPECT_TRUE(same_bits(k->dot_batched, s->dot_batched, w.data(), a.data(), n))
                << block_type(type).name << " tiled " << isa_name(isa);
          }
        }
      }
    }
  }
}

TEST(X86Kernels, WqDotsEqualScalarBitForBit) {
  std::mt19937 rng(17);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (Isa isa : kX86) {
    if (!runs(isa)) continue;
    for (int bits : kWqBits) {
      for (int group : kWqGroups) {
        const std::uint32_t id = wq_type_id(bits, group);
        const DotKernel* k = kernels::find_dot_kernel_for(id, isa);
        const DotKernel* s = kernels::find_scalar_dot_kernel(id);
        ASSERT_NE(k, nullptr);
        ASSERT_NE(k->dot, s->dot) << wq_type_name(bits, group) << ": no " << isa_name(isa) << " kernel";
        EXPECT_STREQ(k->isa, isa_name(isa));
        for (std::int64_t groups : {1, 2, 5, 40}) {
          const std::int64_t n = groups * group;
          std::vector<std::vector<float>> acts(3, std::vector<float>(static_cast<std::size_t>(n)));
          for (auto& v : acts[0]) v = normal(rng);
          for (auto& v : acts[1]) v = 0.25f;
          for (auto& v : acts[2]) v = normal(rng) * 1e-3f;
          acts[2][static_cast<std::size_t>(n / 2)] = -3e4f;
          for (const auto& w : test::wq_weights(bits, group, n, rng)) {
            for (const auto& a : acts) {
              EXPECT_TRUE(same_bits(k->dot, s->dot, w.data(), a.data(), n))
                  << wq_type_name(bits, group) << " " << isa_name(isa);
            }
          }
        }
      }
    }
  }
}

// Rows of n F32 / F16 / BF16 values (raw element bytes) for the float dots: normal, magnitudes
// spread over 2^-20..2^20, all-equal, edge values (signed zeros, the largest finite values that
// cannot overflow a long sum, the smallest normals, subnormals), and tiny values whose products
// are float subnormals (the BF16 pair-dot flushes those; plain FMA lanes keep them).
std::vector<std::vector<std::uint8_t>> float_rows(GgmlType type, std::int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20), pick(0, 7);
  const float big = type == GgmlType::kF16 ? 60000.0f : 1e17f;  // products and long sums stay finite
  const float smallest_normal = type == GgmlType::kF16 ? 0x1p-14f : 0x1p-126f;
  const float subnormal = type == GgmlType::kF16 ? 0x1p-24f : 0x1p-133f;
  const float edge[8] = {0.0f, -0.0f, big, -big, smallest_normal, -subnormal, 1.0f, -3.0f * subnormal};
  std::vector<std::vector<float>> values(5, std::vector<float>(static_cast<std::size_t>(n)));
  for (auto& v : values[0]) v = normal(rng);
  for (auto& v : values[1]) v = std::ldexp(normal(rng), exponent(rng));
  for (auto& v : values[2]) v = -1.25f;
  for (auto& v : values[3]) v = pick(rng) < 2 ? edge[pick(rng)] : normal(rng);
  for (auto& v : values[4]) v = normal(rng) * (type == GgmlType::kF16 ? 0x1p-12f : 0x1p-64f);
  std::vector<std::vector<std::uint8_t>> out;
  const std::size_t width = type == GgmlType::kF32 ? 4 : 2;
  for (const auto& v : values) {
    std::vector<std::uint8_t> row(v.size() * width);
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (type == GgmlType::kF32) {
        std::memcpy(row.data() + 4 * i, &v[i], 4);
      } else {
        const std::uint16_t h = type == GgmlType::kF16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
        std::memcpy(row.data() + 2 * i, &h, 2);
      }
    }
    out.push_back(std::move(row));
  }
  return out;
}

TEST(X86Kernels, FloatDotsEqualScalarBitForBit) {
  std::mt19937 rng(23);
  for (Isa isa : kX86) {
    if (!runs(isa)) continue;
    for (GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16}) {
      const auto id = static_cast<std::uint32_t>(type);
      const DotKernel* k = kernels::find_dot_kernel_for(id, isa);
      const DotKernel* s = kernels::find_scalar_dot_kernel(id);
      const char* name = block_type(type).name;
      ASSERT_NE(k, nullptr);
      ASSERT_NE(k->dot, s->dot) << name << ": no " << isa_name(isa) << " kernel";
      ASSERT_NE(k->dot_batched, s->dot_batched) << name << ": no " << isa_name(isa) << " batched kernel";
      // Whole steps of 64 or none, every tail length class (below and above 8 and 16), rows whose
      // length is a multiple of 16 but not of 32 (BF16's batched path then takes the one-token
      // order), and the real models' row lengths.
      for (std::int64_t n : {1, 5, 8, 13, 16, 24, 31, 32, 48, 63, 64, 65, 72, 79, 96, 112, 127, 128, 576, 1021, 1549}) {
        const auto ws = float_rows(type, n, rng);
        const auto as = float_rows(type, n, rng);
        for (const auto& w : ws) {
          for (const auto& a : as) {
            EXPECT_TRUE(same_bits(k->dot, s->dot, w.data(), a.data(), n)) << name << " " << isa_name(isa);
            EXPECT_TRUE(same_bits(k->dot_batched, s->dot_batched, w.data(), a.data(), n))
                << name << " batched " << isa_name(isa);
          }
        }
      }
    }
  }
}

// The float types take tinyBLAS's order only where ggml does: 2+ tokens and a multiple of 4 rows.
TEST(X86Kernels, FloatBatchedPathNeedsTwoTokensAndFourRowMultiples) {
  for (GgmlType type : {GgmlType::kF32, GgmlType::kF16, GgmlType::kBF16}) {
    const DotKernel* k = kernels::find_scalar_dot_kernel(static_cast<std::uint32_t>(type));
    ASSERT_NE(k, nullptr);
    EXPECT_EQ(k->select(576, 1, 0), k->dot);
    EXPECT_EQ(k->select(576, 2, 1), k->dot_batched);
    EXPECT_EQ(k->select(578, 5, 0), k->dot);
  }
}

// Float rows for the activation quantizers: normal, all-equal, all-zero, tiny with one outlier,
// +m and -m both at the largest magnitude (either order: the Q8_K tie rules), codes on .5 ties.
std::vector<std::vector<float>> act_rows(std::int64_t n, std::mt19937& rng) {
  const auto len = static_cast<std::size_t>(n);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<std::vector<float>> rows(7, std::vector<float>(len));
  for (auto& v : rows[0]) v = normal(rng) * 3.0f;
  for (auto& v : rows[1]) v = -0.375f;
  for (auto& v : rows[3]) v = normal(rng) * 1e-4f;
  rows[3][len / 3] = -2e3f;
  for (std::size_t i = 0; i < len; ++i) rows[4][i] = rows[5][i] = normal(rng);
  for (std::size_t b = 0; b < len; b += 32) {
    rows[4][b + 3] = -8.0f, rows[4][b + 20] = 8.0f;  // -m first
    rows[5][b + 3] = 8.0f, rows[5][b + 20] = -8.0f;  // +m first
  }
  // Multiples of amax/254 = 0.5 code steps: many exact halves after scaling by 127/amax.
  for (std::size_t i = 0; i < len; ++i)
    rows[6][i] = static_cast<float>(static_cast<int>(i % 255) - 127) * (1.0f / 254.0f);
  return rows;
}

TEST(X86Kernels, ActivationQuantizersWriteTheScalarBytes) {
  std::mt19937 rng(5);
  for (Isa isa : kX86) {
    if (!runs(isa)) continue;
    for (ActFormat f : {ActFormat::kQ8_0, ActFormat::kQ8_1, ActFormat::kQ8_K, ActFormat::kQ8_Kx4}) {
      const kernels::ActQuantFn simd = kernels::find_act_quantizer(f, isa);
      const kernels::ActQuantFn ref = kernels::find_act_quantizer(f, Isa::kScalar);
      ASSERT_NE(simd, nullptr);
      ASSERT_NE(simd, ref) << kernels::act_format_name(f) << ": no " << isa_name(isa) << " quantizer";
      const std::int64_t block = kernels::act_block_elems(f);
      for (std::int64_t blocks : {1, 2, 13, 64}) {
        const std::int64_t n = blocks * block;
        for (const auto& x : act_rows(n, rng)) {
          std::vector<std::uint8_t> got(kernels::act_row_bytes(f, n)), want(got.size());
          simd(x.data(), got.data(), n);
          ref(x.data(), want.data(), n);
          EXPECT_EQ(got, want) << kernels::act_format_name(f) << " " << isa_name(isa) << " n=" << n;
        }
      }
    }
  }
}

TEST(X86Kernels, PublicQuantizersUseTheDispatchedIsaAndCheckTheLength) {
  std::vector<float> x(64, 0.5f);
  std::vector<std::uint8_t> a(kernels::act_row_bytes(ActFormat::kQ8_0, 64)), b(a.size());
  kernels::quantize_act_q8_0(x.data(), a.data(), 64);
  kernels::find_act_quantizer(ActFormat::kQ8_0, Isa::kScalar)(x.data(), b.data(), 64);
  EXPECT_EQ(a, b);
  EXPECT_EQ(kernels::find_act_quantizer(ActFormat::kF32, Isa::kScalar), nullptr);
  EXPECT_THROW(kernels::quantize_act_q8_K(x.data(), a.data(), 64), Error);
}

}  // namespace
}  // namespace wisp
