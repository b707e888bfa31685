// Mixture-of-experts specifics beyond the logits parity with llama.cpp (test_parity.cpp):
// with the default (batch-invariant) numerics a token's logits must not depend on which other
// tokens shared its step, although the experts then multiply different numbers of rows: a
// 48-token prompt evaluated in one pass, in passes of 5, and one token at a time gives the same
// bits. The files are the tiny MoE models of scripts/gen_golden_arch_logits.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "golden_logits.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace wisp {
namespace {

std::vector<float> logits_in_chunks(const std::shared_ptr<const Model>& model, std::span<const std::int32_t> toks,
                                    std::size_t chunk) {
  Session s(model, {.n_ctx = 256, .n_threads = 2});
  std::vector<float> all;
  for (std::size_t c0 = 0; c0 < toks.size(); c0 += chunk) {
    const auto l = s.eval_all(toks.subspan(c0, std::min(chunk, toks.size() - c0)));
    all.insert(all.end(), l.begin(), l.end());
  }
  return all;
}

class MoeInvariance : public ::testing::TestWithParam<const char*> {};

TEST_P(MoeInvariance, LogitsDoNotDependOnTheStep) {
  const test::GoldenLogits g = test::load_golden_logits(GetParam());
  if (!std::filesystem::exists(g.model_path)) GTEST_SKIP() << "model not found: " << g.model_path;
  auto model = Model::load(g.model_path);
  const std::span<const std::int32_t> toks = std::span(g.tokens).first(48);
  const auto whole = logits_in_chunks(model, toks, 48);
  ASSERT_EQ(whole.size(), toks.size() * static_cast<std::size_t>(g.n_vocab));
  for (const std::size_t chunk : {std::size_t{5}, std::size_t{1}}) {
    const auto parts = logits_in_chunks(model, toks, chunk);
    ASSERT_EQ(parts.size(), whole.size());
    std::size_t differ = 0;
    for (std::size_t i = 0; i < whole.size(); ++i) differ += whole[i] != parts[i];
    EXPECT_EQ(differ, 0u) << "chunks of " << chunk << ": " << differ << " logits differ from the one-pass run";
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, MoeInvariance, ::testing::Values("qwen3moe-tiny", "mixtral-tiny", "gpt-oss-tiny"),
                         [](const auto& p) {
                           std::string n = p.param;
                           std::replace(n.begin(), n.end(), '-', '_');
                           return n;
                         });

}  // namespace
}  // namespace wisp
