// `-l/--logit-bias` of wisp run and wisp chat, spelled as llama.cpp's -l: a malformed item is a
// usage error (exit 2) naming it, caught before the model loads, and so is a token outside the
// model's vocabulary, before anything is evaluated; a +100 bias forces its token
// (every generated token is it), and a ban (-inf) of the greedy first token changes the answer.
#include <gtest/gtest.h>

#include "tests/support/run_command.h"

#include <filesystem>
#include <string>

namespace {

using wisp::test::run_wisp;

const std::string kModel = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";

TEST(LogitBiasFlag, AMalformedItemIsAUsageErrorNamingIt) {
  for (const char* bad : {"12", "x+1", "5+", "5*2", "-3+1", "7+inf", "1+2,9"}) {
    const auto r = run_wisp(std::string("run -m /nonexistent.gguf -p hi --logit-bias '") + bad + "'");
    EXPECT_EQ(r.status, 2) << bad << ": " << r.all();
    EXPECT_NE(r.all().find("--logit-bias"), std::string::npos) << bad << ": " << r.all();
  }
}

TEST(LogitBiasFlag, ATokenOutsideTheVocabularyIsAUsageErrorBeforeEvaluation) {
  if (!std::filesystem::exists(kModel)) GTEST_SKIP() << "model not found: " << kModel;
  for (const char* cmd : {"run -p hi", "chat"}) {
    const auto r = run_wisp(std::string(cmd) + " -m " + kModel + " -t 1 --logit-bias 49152+1", "hello\n");
    EXPECT_EQ(r.status, 2) << cmd << ": " << r.all();
    EXPECT_NE(r.all().find("--logit-bias: token 49152 is outside the model's vocabulary (0 .. 49151)"),
              std::string::npos)
        << cmd << ": " << r.all();
  }
}

TEST(LogitBiasFlag, ForcesAndBansTokens) {
  if (!std::filesystem::exists(kModel)) GTEST_SKIP() << "model not found: " << kModel;
  const std::string base = "run -m " + kModel + " -p 'The capital of France is' -n 4 --temp 0 -t 1";
  const auto plain = run_wisp(base);
  ASSERT_EQ(plain.status, 0) << plain.all();
  // Token 260 of SmolLM2's vocabulary is "Ġthe" (" the"; the GGUF's tokenizer.ggml.tokens, read with
  // the gguf package): forced, it is all four generated tokens.
  const auto forced = run_wisp(base + " --logit-bias 260+100");
  ASSERT_EQ(forced.status, 0) << forced.all();
  EXPECT_EQ(forced.out, " the the the the\n");
  const auto banned = run_wisp(base + " --logit-bias 260+100,260-inf,1-inf");
  ASSERT_EQ(banned.status, 0) << banned.all();
  EXPECT_EQ(banned.out.find(" the the"), std::string::npos) << banned.out;
}

}  // namespace
