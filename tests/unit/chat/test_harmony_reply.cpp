// The final-channel filter over gpt-oss renders made by jinja2 (tests/golden/chat): fed a whole
// rendered conversation in chunks of any size, it gives back exactly the assistant messages'
// contents -- what the template put on the final channel -- and none of the system, developer,
// user, analysis or tool-call text around them.
#include <gtest/gtest.h>

#include "chat/harmony_reply.h"
#include "golden_util.h"

namespace wisp {
namespace {

std::string filtered(const std::string& text, std::size_t chunk) {
  HarmonyFinalFilter f;
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += chunk) out += f.push(std::string_view(text).substr(i, chunk));
  return out + f.finish();
}

TEST(HarmonyFinalFilter, KeepsOnlyTheFinalChannelOfGoldenRenders) {
  std::size_t checked = 0;
  for (const auto& c : chat_test::golden()["cases"]) {
    if (c.value("template", "") != "gpt-oss" || !c.contains("expected")) continue;
    std::string want;
    for (const auto& m : c["context"]["messages"])
      if (m["role"] == "assistant" && !m.contains("tool_calls")) want += m["content"].get<std::string>();
    const std::string text = c["expected"];
    for (std::size_t chunk : {1, 2, 5, 64, 100000}) {
      EXPECT_EQ(filtered(text, chunk), want) << c["name"] << ", chunks of " << chunk;
    }
    ++checked;
  }
  EXPECT_GE(checked, 25u);
}

TEST(HarmonyFinalFilter, AReplyCutInItsAnalysisShowsNothing) {
  HarmonyFinalFilter f;
  EXPECT_EQ(f.push("<|channel|>analysis<|message|>Let me think about <|"), "");
  EXPECT_EQ(f.finish(), "");
  EXPECT_FALSE(f.saw_final());
}

TEST(HarmonyFinalFilter, AnAnswerCutShortKeepsWhatItHas) {
  HarmonyFinalFilter f;
  std::string out = f.push("<|channel|>final<|message|>Paris is <|");
  out += f.finish();
  EXPECT_EQ(out, "Paris is <|");  // the held-back "<|" was text after all
  EXPECT_TRUE(f.saw_final());
}

}  // namespace
}  // namespace wisp
