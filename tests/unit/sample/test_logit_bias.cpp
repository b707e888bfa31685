// Logit biases, the chain's first step: a bias moves the argmax, -infinity bans a token from greedy
// and from every draw, the bias comes before the repetition penalty (hand-computed: the two orders
// give different logits), and bad biases are errors naming what is wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sample/candidates.h"
#include "sample/logit_bias.h"
#include "sample/sampler.h"
#include "wisp/error.h"

namespace wisp {
namespace {

SamplerParams plain(float temperature) {
  SamplerParams p;
  p.top_k = 0;
  p.top_p = 1.0f;
  p.min_p = 0.0f;
  p.temperature = temperature;
  p.seed = 7;
  return p;
}

TEST(LogitBias, APositiveBiasMovesTheGreedyChoice) {
  SamplerParams p = plain(0.0f);
  p.logit_bias = {{2, 1.5f}};
  Sampler s(p);
  const std::vector<float> logits = {1.0f, 3.0f, 2.0f, 0.0f};
  EXPECT_EQ(s.sample(logits), 2);  // 2 + 1.5 > 3
  p.logit_bias = {{2, 0.5f}};
  EXPECT_EQ(Sampler(p).sample(logits), 1);  // 2.5 < 3
}

TEST(LogitBias, ABanIsNeverDrawn) {
  SamplerParams p = plain(1.0f);
  p.logit_bias = {{1, -INFINITY}, {3, -INFINITY}};
  Sampler s(p);
  const std::vector<float> logits = {0.0f, 5.0f, 0.5f, 5.0f};
  for (int i = 0; i < 2000; ++i) {
    const std::int32_t t = s.sample(logits);
    ASSERT_TRUE(t == 0 || t == 2) << t;
  }
}

TEST(LogitBias, ComesBeforeTheRepetitionPenalty) {
  // Token 0 (logit 2) was seen once; repeat penalty 2, bias +2. Bias first: (2 + 2) / 2 = 2, below
  // token 1's 2.5. Penalty first: 2 / 2 + 2 = 3, above it.
  SamplerParams p = plain(0.0f);
  p.repeat_penalty = 2.0f;
  p.logit_bias = {{0, 2.0f}};
  Sampler s(p);
  s.accept(0);
  EXPECT_EQ(s.sample(std::vector<float>{2.0f, 2.5f}), 1);
  EXPECT_FLOAT_EQ(s.last_candidates().items[0].logit, 2.0f);
}

TEST(LogitBias, ATokenListedTwiceGetsBothBiases) {
  Candidates c;
  c.assign(std::vector<float>{0.0f, 1.0f});
  const LogitBias b[] = {{0, 0.75f}, {0, 0.75f}};
  apply_logit_bias(c, b);
  EXPECT_FLOAT_EQ(c.items[0].logit, 1.5f);
  EXPECT_FLOAT_EQ(c.items[1].logit, 1.0f);
}

TEST(LogitBias, BadBiasesAreErrorsNamingThem) {
  auto message = [](const SamplerParams& p, const std::vector<float>& logits) -> std::string {
    try {
      Sampler s(p);
      s.sample(logits);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::vector<float> logits = {0.0f, 1.0f, 2.0f};
  SamplerParams p = plain(0.0f);
  p.logit_bias = {{3, 1.0f}};
  EXPECT_NE(message(p, logits).find("token 3 but the vocabulary has 3 tokens"), std::string::npos);
  p.logit_bias = {{-1, 1.0f}};
  EXPECT_NE(message(p, logits).find("token -1"), std::string::npos);
  p.logit_bias = {{0, NAN}};
  EXPECT_NE(message(p, logits).find("logit_bias"), std::string::npos);
  p.logit_bias = {{0, INFINITY}};
  EXPECT_NE(message(p, logits).find("logit_bias"), std::string::npos);
  p.logit_bias = {{0, -INFINITY}, {1, -INFINITY}, {2, -INFINITY}};
  EXPECT_NE(message(p, logits).find("bans every token"), std::string::npos);
}

}  // namespace
}  // namespace wisp
