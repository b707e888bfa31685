// A harmony model's reasoning in the chat answers: "reasoning_content" beside "content" in the
// message (non-streamed) and in the delta (streamed), as OpenAI-compatible servers put it, and no
// such key at all for a model that has no reasoning.
#include <gtest/gtest.h>

#include "serve/api.h"

namespace {

using wisp::FinishReason;
using wisp::serve::ChoiceResult;
using wisp::serve::json;

TEST(ReasoningJson, TheMessageCarriesReasoningContentBesideTheAnswer) {
  std::vector<ChoiceResult> choices(2);
  choices[0].text = "Paris.";
  choices[0].reason = FinishReason::kStop;
  choices[0].reasoning = "The user asks for a capital.";
  choices[1].text = "Lyon?";
  const json j = wisp::serve::chat_completion_json("id", 0, "m", choices, {});
  const json& m0 = j["choices"][0]["message"];
  EXPECT_EQ(m0["content"], "Paris.");
  EXPECT_EQ(m0["reasoning_content"], "The user asks for a capital.");
  const json& m1 = j["choices"][1]["message"];
  EXPECT_EQ(m1["content"], "Lyon?");
  EXPECT_FALSE(m1.contains("reasoning_content"));
}

TEST(ReasoningJson, AStreamedDeltaCarriesReasoningAloneOrWithContent) {
  const json r = wisp::serve::chat_chunk_json("id", 0, "m", 0, std::nullopt, false, std::nullopt, nullptr, "Think");
  const json& d = r["choices"][0]["delta"];
  EXPECT_EQ(d["reasoning_content"], "Think");
  EXPECT_FALSE(d.contains("content"));
  const json c = wisp::serve::chat_chunk_json("id", 0, "m", 0, std::string_view("Paris"), false, std::nullopt);
  EXPECT_EQ(c["choices"][0]["delta"]["content"], "Paris");
  EXPECT_FALSE(c["choices"][0]["delta"].contains("reasoning_content"));
}

}  // namespace
