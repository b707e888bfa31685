// Logits parity with llama.cpp on files of the block types added for the GGUFs people have:
// qwen2-tiny's shape (rows of 256 values, 2 layers) with random weights, quantized by llama.cpp's
// own quantizer.
//  - The codebook and ternary types (IQ4_XS, IQ4_NL, TQ1_0, TQ2_0), recorded by
//    scripts/gen_golden_logits.py (qwen2-tiny-<type>); wisp's exact orders in
//    src/kernels/dot_nonlinear.cpp (the one-token dot, tinyBLAS and the repacked GEMV for IQ4_NL,
//    the tiled GEMM for IQ4_XS).
//  - The grid types (IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), which need an
//    importance matrix (a small one), per file type as llama.cpp mixes it (IQ2_M: IQ2_S matrices;
//    a few Q2_K..Q5_K and F32 tensors beside), recorded by scripts/gen_golden_iq_logits.py; wisp's
//    exact orders in src/kernels/dot_iq_grid.cpp, pinned to libggml-cpu's dots by test_golden_dots.
//  - NVFP4 (every attention and FFN matrix; llama.cpp has no NVFP4 file type, its quantizer writes
//    the tensors on request), recorded by scripts/gen_golden_nvfp4_logits.py on an AVX-512 build;
//    and llama-tiny-nvfp4-scaled, whose NVFP4 matrices and output carry the per-tensor `.scale`
//    factors of converted checkpoints (multiplied into each product) and two unused `.input_scale`s.
// With exact numerics, in the ggml build the golden records (EngineOptions::exact_isa), the top-10
// logits of every position of the 256-token text must be llama.cpp's bit for bit and the greedy
// continuations (one token at a time) its tokens. The default (batch-invariant) numerics are
// checked for top-1 agreement.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "golden_logits.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace wisp {
namespace {

std::int32_t argmax(std::span<const float> v) {
  return static_cast<std::int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

class BlockTypeParity : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    g_ = test::load_golden_logits(GetParam());
    ASSERT_TRUE(std::filesystem::exists(g_.model_path)) << g_.model_path;
    model_ = Model::load(g_.model_path);
    ASSERT_EQ(model_->info().n_vocab, g_.n_vocab);
  }
  test::GoldenLogits g_;
  std::shared_ptr<const Model> model_;
};

TEST_P(BlockTypeParity, ExactLogitsEqualLlamaCpp) {
  const auto V = static_cast<std::size_t>(g_.n_vocab);
  Session s(model_, {.n_ctx = 512, .n_threads = 1, .exact = true, .exact_isa = g_.ggml_isa});
  const auto logits = s.eval_all(g_.tokens);
  std::size_t differ = 0, agree = 0, first_pos = 0;
  double max_delta = 0.0;
  for (std::size_t pos = 0; pos < g_.tokens.size(); ++pos) {
    const auto row = logits.subspan(pos * V, V);
    if (argmax(row) == g_.argmax[pos]) ++agree;
    for (const auto& [id, ref] : g_.top[pos]) {
      if (std::bit_cast<std::uint32_t>(row[id]) != std::bit_cast<std::uint32_t>(ref)) {
        if (differ++ == 0) first_pos = pos;
      }
      max_delta = std::max(max_delta, std::abs(static_cast<double>(row[id]) - ref));
    }
  }
  std::printf(
      "[%s] top-1 %zu/%zu; top-10 logits differing in any bit: %zu of %zu, the first at position %zu "
      "(max |delta| %.3g)\n",
      GetParam(), agree, g_.tokens.size(), differ, 10 * g_.tokens.size(), differ ? first_pos : 0, max_delta);
  EXPECT_EQ(agree, g_.tokens.size());
  // Bit for bit, in the order of the llama.cpp build that made the golden (g_.ggml_isa; these
  // files but NVFP4's come from an AVX2 build, whose attention sums and exp differ from the AVX-512
  // build's).
  EXPECT_EQ(differ, 0u) << "first differing logit at position " << first_pos << ", max |delta| " << max_delta;
}

TEST_P(BlockTypeParity, GreedyContinuationsEqualLlamaCpp) {
  for (const auto& c : g_.continuations) {
    Session s(model_, {.n_ctx = 512, .n_threads = 1, .exact = true, .exact_isa = g_.ggml_isa});
    auto logits = s.eval(c.prompt_tokens);
    std::vector<std::int32_t> got;
    for (std::size_t step = 0; step < c.tokens.size(); ++step) {
      got.push_back(argmax(logits));
      if (step + 1 < c.tokens.size()) logits = s.eval(std::vector<std::int32_t>{got.back()});
    }
    EXPECT_EQ(got, c.tokens) << GetParam() << " prompt " << c.prompt;
  }
}

TEST_P(BlockTypeParity, DefaultNumericsAgreeOnTopOne) {
  const auto V = static_cast<std::size_t>(g_.n_vocab);
  Session s(model_, {.n_ctx = 512, .n_threads = 1});
  const auto logits = s.eval_all(g_.tokens);
  std::size_t agree = 0;
  for (std::size_t pos = 0; pos < g_.tokens.size(); ++pos) {
    if (argmax(logits.subspan(pos * V, V)) == g_.argmax[pos]) ++agree;
  }
  std::printf("[%s] default numerics: top-1 %zu/%zu\n", GetParam(), agree, g_.tokens.size());
  EXPECT_GE(static_cast<double>(agree), 0.97 * static_cast<double>(g_.tokens.size()));
}

INSTANTIATE_TEST_SUITE_P(Golden, BlockTypeParity,
                         ::testing::Values("qwen2-tiny-iq4_xs", "qwen2-tiny-iq4_nl", "qwen2-tiny-tq1_0",
                                           "qwen2-tiny-tq2_0", "qwen2-tiny-iq1_s", "qwen2-tiny-iq1_m",
                                           "qwen2-tiny-iq2_xxs", "qwen2-tiny-iq2_xs", "qwen2-tiny-iq2_m",
                                           "qwen2-tiny-iq3_xxs", "qwen2-tiny-iq3_s", "qwen2-tiny-nvfp4",
                                           "llama-tiny-nvfp4-scaled"),
                         [](const auto& info) {
                           std::string s = info.param;
                           std::replace(s.begin(), s.end(), '-', '_');
                           return s;
                         });

}  // namespace
}  // namespace wisp
