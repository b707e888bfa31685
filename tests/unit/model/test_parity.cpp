// Logits parity with llama.cpp (the golden data of scripts/gen_golden_logits.py) on the real
// models (SmolLM2-135M Q4_1: llama; Gemma 3 270M Q4_K_M: gemma3; SmolLM2-135M F16 from the sweep,
// skipped where scripts have not made it: the float dots) and on random-weight models of
// the architectures no real model here covers (qwen2 with QKV biases, llama with a separate output
// matrix and GQA 4:1, gemma3 with sliding windows inside the text and soft-capping; then qwen3,
// qwen3 with YaRN, llama with Llama 3's rope_freqs, gemma2, phi3 (LongRoPE short and long factors), smollm3, olmo2,
// granite, granitemoe (with and without a shared expert), the mixtures of experts qwen3moe (8 experts, top-3) and
// Mixtral-style llama (4, top-2), one Q8_0 file each, and gpt-oss (4 experts, top-2, MXFP4 experts) from
// scripts/gen_golden_arch_logits.py):
//   - over a 256-token text: top-1 agreement >= 99% and the largest |delta logit| over llama.cpp's
//     top-10 of every position (printed), and the largest |delta| over the full vocabulary at a few
//     positions (llama.cpp's values stored as float16, so that part carries half-precision error);
//   - greedy continuations (64 tokens for the real models) equal to llama.cpp's.
// With exact numerics (SessionOptions::exact: llama.cpp's batch-dependent orders; the default
// batch-invariant numerics use the one-token order for every token instead) wisp reproduces
// llama.cpp's x86 float order (src/kernels/ggml_order.h) in the build that made each golden
// (its "ggml_isa": the AVX-512 and AVX2 builds of libggml-cpu sum in different lanes and have
// different vector exps; SessionOptions::exact_isa), so on these files the logits are expected
// to be bit-identical; the bounds leave room for 1-ulp libm differences on other machines, not for
// a different order (which would cost ~5% of top-1 through chaos).
// The threads used default to 1 (WISP_TEST_THREADS overrides): results do not depend on it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "golden_logits.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace wisp {
namespace {

int test_threads() {
  const char* e = std::getenv("WISP_TEST_THREADS");
  return e ? std::max(1, std::atoi(e)) : 1;
}

std::int32_t argmax(std::span<const float> v) {
  return static_cast<std::int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

struct ParityCase {
  const char* golden;
  double max_top10_delta;  // bound on |wisp - llama.cpp| over each position's top-10
  std::size_t min_continuations_equal;
};

class Parity : public ::testing::TestWithParam<ParityCase> {
 protected:
  void SetUp() override {
    g_ = test::load_golden_logits(GetParam().golden);
    if (!std::filesystem::exists(g_.model_path)) GTEST_SKIP() << "model not found: " << g_.model_path;
    model_ = Model::load(g_.model_path);
    ASSERT_EQ(model_->info().n_vocab, g_.n_vocab);
  }
  test::GoldenLogits g_;
  std::shared_ptr<const Model> model_;
};

TEST_P(Parity, TextLogitsAgree) {
  const std::size_t n = g_.tokens.size();
  const auto V = static_cast<std::size_t>(g_.n_vocab);
  Session s(model_, {.n_ctx = 512, .n_threads = test_threads(), .exact = true, .exact_isa = g_.ggml_isa});
  std::size_t agree = 0;
  double max_top10 = 0.0, max_full = 0.0, max_full_rel = 0.0;
  std::size_t worst_pos = 0;
  std::string disagreements, over;  // the first positions beyond the bound, to see where it starts
  std::size_t n_over = 0;
  // Chunks of 64 keep the all-positions logits small (Gemma's vocabulary is 262144).
  for (std::size_t c0 = 0; c0 < n; c0 += 64) {
    const std::size_t cn = std::min<std::size_t>(64, n - c0);
    const auto logits = s.eval_all(std::span(g_.tokens).subspan(c0, cn));
    for (std::size_t i = 0; i < cn; ++i) {
      const std::size_t pos = c0 + i;
      const auto row = logits.subspan(i * V, V);
      const std::int32_t mine = argmax(row);
      if (mine == g_.argmax[pos]) {
        ++agree;
      } else {
        const auto& top = g_.top[pos];
        char buf[200];
        std::snprintf(buf, sizeof buf, "  pos %zu: wisp %d, llama.cpp %d (llama.cpp margin %.5f, wisp margin %.5f)\n",
                      pos, mine, g_.argmax[pos], top[0].second - top[1].second, row[mine] - row[g_.argmax[pos]]);
        disagreements += buf;
      }
      double pos_top10 = 0.0;
      for (const auto& [id, ref] : g_.top[pos]) {
        const double d = std::abs(static_cast<double>(row[id]) - ref);
        pos_top10 = std::max(pos_top10, d);
        if (d > max_top10) {
          max_top10 = d;
          worst_pos = pos;
        }
      }
      if (pos_top10 > GetParam().max_top10_delta && ++n_over <= 8) {
        char buf[120];
        std::snprintf(buf, sizeof buf, "  pos %zu: max |dlogit| over llama.cpp's top-10 %.5f\n", pos, pos_top10);
        over += buf;
      }
      for (std::size_t f = 0; f < g_.full_positions.size(); ++f) {
        if (static_cast<std::size_t>(g_.full_positions[f]) != pos) continue;
        for (std::size_t v = 0; v < V; ++v) {
          const double ref = g_.full[f][v];
          const double d = std::abs(static_cast<double>(row[v]) - ref);
          max_full = std::max(max_full, d);
          // Beyond the float16 rounding of the stored reference (half an ulp: |ref| * 2^-11).
          max_full_rel = std::max(max_full_rel, d - std::abs(ref) * std::ldexp(1.0, -11));
        }
      }
    }
  }
  const double pct = 100.0 * static_cast<double>(agree) / static_cast<double>(n);
  std::printf(
      "[%s] top-1 agreement %zu/%zu = %.2f%%; max |dlogit| over llama.cpp's top-10: %.5f (position %zu); "
      "max |dlogit| over the full vocabulary at %zu positions: %.5f (%.5f beyond float16 rounding)\n",
      GetParam().golden, agree, n, pct, max_top10, worst_pos, g_.full_positions.size(), max_full, max_full_rel);
  if (!disagreements.empty()) std::printf("%s", disagreements.c_str());
  if (n_over > 0) std::printf("%zu positions beyond the bound; the first:\n%s", n_over, over.c_str());
  RecordProperty("top1_agreement_pct", std::to_string(pct));
  RecordProperty("max_abs_dlogit_top10", std::to_string(max_top10));
  EXPECT_GE(pct, 99.0);
  EXPECT_LE(max_top10, GetParam().max_top10_delta);
  EXPECT_LE(max_full_rel, GetParam().max_top10_delta);
}

TEST_P(Parity, GreedyContinuationsMatch) {
  auto engine =
      Engine::create(model_, {.n_threads = test_threads(), .kv_tokens = 1024, .exact = true, .exact_isa = g_.ggml_isa});
  std::size_t equal = 0;
  for (const auto& c : g_.continuations) {
    Session s(engine, {.n_ctx = 512});
    auto logits = s.eval(c.prompt_tokens);
    std::vector<std::int32_t> got;
    for (std::size_t step = 0; step < c.tokens.size(); ++step) {
      const std::int32_t tok = argmax(logits);
      got.push_back(tok);
      if (tok != c.tokens[step]) {
        std::printf("[%s] prompt %s: diverges at step %zu: wisp %d, llama.cpp %d (llama.cpp margin %.5f)\n",
                    GetParam().golden, c.prompt.c_str(), step, tok, c.tokens[step], c.margins[step]);
        break;
      }
      if (step + 1 < c.tokens.size()) logits = s.eval(std::vector<std::int32_t>{tok});
    }
    if (got == c.tokens) ++equal;
  }
  std::printf("[%s] greedy continuations equal to llama.cpp's: %zu/%zu\n", GetParam().golden, equal,
              g_.continuations.size());
  EXPECT_GE(equal, GetParam().min_continuations_equal);
}

// LongRoPE's factor set follows the context, as llama.cpp's does: phi3-long-tiny's golden was made
// with a context (512) beyond its original one (256), so the long factors; an engine whose sequences
// cannot outgrow the original context runs the short ones, and its logits part from llama.cpp's.
TEST(LongRope, ShortFactorsWithinTheOriginalContext) {
  const test::GoldenLogits g = test::load_golden_logits("phi3-long-tiny");
  if (!std::filesystem::exists(g.model_path)) GTEST_SKIP() << "model not found: " << g.model_path;
  const auto model = Model::load(g.model_path);
  Session s(model, {.n_ctx = 256, .n_threads = test_threads(), .exact = true, .exact_isa = g.ggml_isa});
  const auto V = static_cast<std::size_t>(g.n_vocab);
  const auto logits = s.eval_all(std::span(g.tokens).subspan(0, 64));
  double max_delta = 0.0;
  for (std::size_t pos = 0; pos < 64; ++pos)
    for (const auto& [id, ref] : g.top[pos])
      max_delta = std::max(max_delta, std::abs(static_cast<double>(logits[pos * V + id]) - ref));
  std::printf("[phi3-long-tiny at n_ctx 256, short factors] max |dlogit| over llama.cpp's top-10: %.5f\n", max_delta);
  EXPECT_GT(max_delta, 0.05);
}

INSTANTIATE_TEST_SUITE_P(Golden, Parity,
                         ::testing::Values(ParityCase{"smollm2-135m", 0.01, 5}, ParityCase{"gemma3-270m", 0.01, 5},
                                           ParityCase{"smollm2-135m-f16", 0.01, 5}, ParityCase{"qwen2-tiny", 0.01, 3},
                                           ParityCase{"llama-tiny", 0.01, 3}, ParityCase{"gemma3-tiny", 0.01, 3},
                                           // One per further architecture (scripts/gen_golden_arch_logits.py;
                                           // each golden records the llama.cpp build that made it, AVX2 or
                                           // AVX-512): bit-exact in that build's order. mixtral-tiny's golden
                                           // is the AVX-512 build's: its F32 router matmul runs llama.cpp's
                                           // float weight dots, which wisp's exact path has in the AVX-512
                                           // build's lanes only (kernels/dot_float.cpp); replayed in the AVX2
                                           // build's order it first differed at position 41 and drifted to
                                           // 0.37, so an AVX2 host's llama.cpp and wisp --exact still differ
                                           // on F32/F16 weights.
                                           ParityCase{"smollm3-tiny", 0.01, 3}, ParityCase{"granite-tiny", 0.01, 3},
                                           ParityCase{"qwen3-tiny", 0.01, 3}, ParityCase{"qwen3-yarn-tiny", 0.01, 3},
                                           ParityCase{"llama3-tiny", 0.01, 3}, ParityCase{"gemma2-tiny", 0.01, 3},
                                           ParityCase{"phi3-tiny", 0.01, 3}, ParityCase{"phi3-long-tiny", 0.01, 3},
                                           ParityCase{"olmo2-tiny", 0.01, 3}, ParityCase{"qwen3moe-tiny", 0.01, 3},
                                           // granitemoe: 4 experts top-2 (F32 router, made by the AVX-512
                                           // build, whose float-dot lanes wisp has), and with a shared expert.
                                           ParityCase{"granitemoe-tiny", 0.01, 3},
                                           ParityCase{"granitemoe-shared-tiny", 0.01, 3},
                                           ParityCase{"mixtral-tiny", 0.01, 3},
                                           // gpt-oss: MXFP4 experts (repacked, one token at a time as
                                           // ggml's mul_mat_id runs them), sinks, biases, clamped SwiGLU.
                                           ParityCase{"gpt-oss-tiny", 0.01, 3}),
                         [](const auto& p) {
                           std::string n = p.param.golden;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace wisp
