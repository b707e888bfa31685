// wisp's scalar reference dots against llama.cpp itself: matmul results computed by libggml-cpu
// (scripts/gen_golden_dots.py, golden files in tests/golden/dots/) for random weights and float
// activations, K-quants, the float types (F32, F16, BF16) and the codebook and ternary types. wisp converts the
// activations with its own quantizer, picks the kernel variant ggml would use for that batch (one-token or batched;
// never repacked: the oracle's buffer is not) and must return the same bits. The SIMD
// kernels are tested for equality with these references (test_isa_dots.cpp), so they inherit it.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "kernels/act_quant.h"
#include "kernels/dot.h"

namespace wisp {
namespace {

struct GoldenCase {
  std::uint32_t type = 0, k = 0, m = 0, n = 0;
  std::vector<std::uint8_t> weights;
  std::vector<float> acts;     // n rows of k
  std::vector<float> results;  // n rows of m
};

GoldenCase load(const std::string& name) {
  const std::string path = std::string(WISP_GOLDEN_DIR) + "/dots/" + name + ".bin";
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  GoldenCase c;
  std::uint32_t hdr[4];
  f.read(reinterpret_cast<char*>(hdr), sizeof hdr);
  c.type = hdr[0], c.k = hdr[1], c.m = hdr[2], c.n = hdr[3];
  c.weights.resize(block_type(static_cast<GgmlType>(c.type)).row_bytes(c.k) * c.m);
  c.acts.resize(static_cast<std::size_t>(c.n) * c.k);
  c.results.resize(static_cast<std::size_t>(c.n) * c.m);
  f.read(reinterpret_cast<char*>(c.weights.data()), static_cast<std::streamsize>(c.weights.size()));
  f.read(reinterpret_cast<char*>(c.acts.data()), static_cast<std::streamsize>(c.acts.size() * 4));
  f.read(reinterpret_cast<char*>(c.results.data()), static_cast<std::streamsize>(c.results.size() * 4));
  if (!f) throw std::runtime_error("truncated " + path);
  return c;
}

// Runs the case through `k` (scalar or SIMD) and counts the results that differ in any bit.
int mismatches(const GoldenCase& c, const kernels::DotKernel& k, std::string* first) {
  const std::size_t row_bytes = c.weights.size() / c.m;
  int bad = 0;
  for (std::uint32_t t = 0; t < c.n; ++t) {
    // The plain (not repacked) paths: the oracle ran on ggml's plain CPU buffer, which never
    // repacks, so the one-token and batched kernels are compared whatever the row count.
    const kernels::ActFormat f = k.act;
    std::vector<std::uint8_t> act(kernels::act_row_bytes(f, c.k));
    kernels::convert_act_row(f, c.acts.data() + static_cast<std::size_t>(t) * c.k, act.data(), c.k);
    const bool batched =
        k.dot_batched != nullptr && c.n >= static_cast<std::uint32_t>(k.batch_min) && c.m % k.batch_rows_multiple == 0;
    const kernels::DotFn dot = batched ? k.dot_batched : k.dot;
    for (std::uint32_t r = 0; r < c.m; ++r) {
      const float got = dot(c.weights.data() + r * row_bytes, act.data(), c.k);
      const float want = c.results[static_cast<std::size_t>(t) * c.m + r];
      if (std::bit_cast<std::uint32_t>(got) != std::bit_cast<std::uint32_t>(want)) {
        if (bad++ == 0 && first) {
          *first = "token " + std::to_string(t) + " row " + std::to_string(r) + ": wisp " + std::to_string(got) +
                   " llama.cpp " + std::to_string(want);
        }
      }
    }
  }
  return bad;
}

class GoldenDots : public ::testing::TestWithParam<const char*> {};

TEST_P(GoldenDots, ScalarReferenceEqualsLlamaCpp) {
  const GoldenCase c = load(GetParam());
  const kernels::DotKernel* k = kernels::find_scalar_dot_kernel(c.type);
  ASSERT_NE(k, nullptr);
  std::string first;
  EXPECT_EQ(mismatches(c, *k, &first), 0) << GetParam() << ": " << first;
}

TEST_P(GoldenDots, EveryIsaEqualsLlamaCpp) {
  const GoldenCase c = load(GetParam());
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    const kernels::DotKernel* k = kernels::find_dot_kernel_for(c.type, isa);
    if (k == nullptr) continue;  // the CPU lacks this ISA
    std::string first;
    EXPECT_EQ(mismatches(c, *k, &first), 0) << GetParam() << " " << isa_name(isa) << ": " << first;
  }
}

INSTANTIATE_TEST_SUITE_P(
    LlamaCpp, GoldenDots,
    ::testing::Values("Q2_K_K2048_N1", "Q3_K_K2048_N1", "Q4_K_K2048_N1", "Q5_K_K2048_N1", "Q6_K_K2048_N1",
                      "Q2_K_K1024_N8", "Q3_K_K1024_N8", "Q5_K_K1024_N8",
                      // Float types: one token (vec_dot) and batches (tinyBLAS, or vec_dot when K is
                      // not a multiple of its 16 / 32), with tails past the last step of 64.
                      "F32_K1024_N1", "F32_K1000_N1", "F32_K1024_N3", "F32_K1000_N3", "F32_K1021_N1", "F32_K1011_N1",
                      "F16_K1024_N1", "F16_K1000_N1", "F16_K1024_N3", "F16_K1000_N3", "F16_K1021_N1", "BF16_K1024_N1",
                      "BF16_K1000_N1", "BF16_K1024_N3", "BF16_K1000_N3", "BF16_K1021_N1", "BF16_K1008_N3",
                      // Codebook and ternary types: one token (even and odd block counts), tinyBLAS
                      // (IQ4_NL), the tiled GEMM (IQ4_XS at 8 tokens), small batches (one-token).
                      "IQ4_NL_K1024_N1", "IQ4_NL_K1056_N1", "IQ4_NL_K1024_N3", "IQ4_NL_K1056_N8", "IQ4_XS_K2048_N1",
                      "IQ4_XS_K1024_N3", "IQ4_XS_K1024_N8", "TQ1_0_K2048_N1", "TQ1_0_K1024_N8", "TQ2_0_K2048_N1",
                      "TQ2_0_K1024_N8", "MXFP4_K1024_N1", "MXFP4_K1056_N1", "MXFP4_K1024_N8", "IQ2_XXS_K2048_N1",
                      "IQ2_XXS_K1024_N8", "IQ3_XXS_K2048_N1", "IQ3_XXS_K1024_N8", "IQ2_XS_K2048_N1", "IQ2_XS_K1024_N8",
                      "IQ2_S_K2048_N1", "IQ2_S_K1024_N8", "IQ3_S_K2048_N1", "IQ3_S_K1024_N8", "IQ1_S_K2048_N1",
                      "IQ1_S_K1024_N8", "IQ1_M_K2048_N1", "IQ1_M_K1024_N8", "NVFP4_K1024_N1", "NVFP4_K1088_N1",
                      "NVFP4_K1024_N8"),
    [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace wisp
