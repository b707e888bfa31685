// wisp ppl against llama.cpp's number (scripts/llamacpp_ppl.py, same windows, golden committed)
// and the eval arithmetic.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "eval/perplexity.h"
#include "wisp/model.h"

namespace wisp::eval {
namespace {

std::string read(const std::string& p) {
  std::ifstream in(p);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Eval, LogSoftmaxNormalizes) {
  const float logits[] = {1.0f, 2.0f, 3.0f, -100.0f};
  std::vector<double> lp;
  log_softmax(logits, 4, lp);
  double s = 0;
  for (double v : lp) s += std::exp(v);
  EXPECT_NEAR(s, 1.0, 1e-12);
  EXPECT_NEAR(lp[2] - lp[1], 1.0, 1e-12);
}

TEST(Eval, PerplexityMatchesLlamaCppWithinOnePercent) {
  const auto golden = nlohmann::json::parse(read(std::string(WISP_GOLDEN_DIR) + "/eval/llamacpp_ppl_smollm2.json"));
  const std::string model_path = std::string(WISP_MODELS_DIR) + "/" + golden["model"].get<std::string>();
  const std::string text = read(std::string(WISP_SOURCE_DIR) + "/" + golden["text"].get<std::string>());
  auto model = Model::load(model_path);
  PplOptions opt;
  opt.n_ctx = golden["ctx"];
  opt.max_chunks = golden["chunks"];
  opt.log = nullptr;
  const PplResult r = perplexity(model, model, model_path, text, opt);
  EXPECT_EQ(r.n_tokens, golden["n_tokens"].get<std::int64_t>());
  EXPECT_EQ(r.n_scored, golden["n_scored"].get<std::int64_t>());
  const double want = golden["ppl"];
  EXPECT_NEAR(r.ppl(), want, 0.01 * want) << "wisp " << r.ppl() << " vs llama.cpp " << want;
  // Against itself: no divergence, full agreement, zero delta.
  EXPECT_NEAR(r.mean_kl(), 0.0, 1e-9);
  EXPECT_DOUBLE_EQ(r.top1(), 1.0);
  EXPECT_NEAR(r.base_ppl(), r.ppl(), 1e-9);
}

TEST(Eval, TooShortTextIsAClearError) {
  const std::string model_path = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  auto model = Model::load(model_path);
  PplOptions opt;
  opt.log = nullptr;
  try {
    perplexity(model, nullptr, model_path, "just a few words", opt);
    FAIL();
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("needs at least 1024"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wisp::eval
