// The harmony reply splitter over gpt-oss renders made by jinja2 (tests/golden/chat): fed a whole
// rendered conversation in chunks of any size, it gives back as the content exactly the assistant
// messages' contents -- what the template put on the final channel -- and as the reasoning exactly
// the `thinking` fields the template rendered on the analysis channel, and none of the system,
// developer, user or tool-call text around them.
#include <gtest/gtest.h>

#include "chat/harmony_reply.h"
#include "golden_util.h"

namespace wisp {
namespace {

HarmonyText split(const std::string& text, std::size_t chunk) {
  HarmonyReplySplitter f;
  HarmonyText out;
  auto add = [&](const HarmonyText& t) {
    out.reasoning += t.reasoning;
    out.content += t.content;
  };
  for (std::size_t i = 0; i < text.size(); i += chunk) add(f.push(std::string_view(text).substr(i, chunk)));
  add(f.finish());
  return out;
}

TEST(HarmonyReplySplitter, SplitsGoldenRendersIntoTheFinalAndAnalysisChannels) {
  std::size_t checked = 0, with_reasoning = 0;
  for (const auto& c : chat_test::golden()["cases"]) {
    if (c.value("template", "") != "gpt-oss" || !c.contains("expected")) continue;
    const std::string text = c["expected"];
    std::string want, want_reasoning;
    for (const auto& m : c["context"]["messages"]) {
      if (m["role"] != "assistant") continue;
      if (!m.contains("tool_calls")) want += m["content"].get<std::string>();
      // The template renders a message's thinking only where it still matters (the last turn,
      // a tool call): expected wherever the render carries it.
      if (m.contains("thinking") && m["thinking"].is_string()) {
        const std::string t = m["thinking"];
        if (text.find("<|channel|>analysis<|message|>" + t + "<|end|>") != std::string::npos) want_reasoning += t;
      }
    }
    with_reasoning += want_reasoning.empty() ? 0 : 1;
    for (std::size_t chunk : {1, 2, 5, 64, 100000}) {
      const HarmonyText got = split(text, chunk);
      EXPECT_EQ(got.content, want) << c["name"] << ", chunks of " << chunk;
      EXPECT_EQ(got.reasoning, want_reasoning) << c["name"] << ", chunks of " << chunk;
    }
    ++checked;
  }
  EXPECT_GE(checked, 25u);
  EXPECT_GE(with_reasoning, 2u);
}

TEST(HarmonyReplySplitter, AReplyCutInItsAnalysisHasReasoningAndNoAnswer) {
  HarmonyReplySplitter f;
  const HarmonyText a = f.push("<|channel|>analysis<|message|>Let me think about <|");
  EXPECT_EQ(a.content, "");
  EXPECT_EQ(a.reasoning, "Let me think about ");
  const HarmonyText b = f.finish();
  EXPECT_EQ(b.content, "");
  EXPECT_EQ(b.reasoning, "<|");  // held back as a possible marker; the reply ended there
  EXPECT_FALSE(f.saw_final());
}

TEST(HarmonyReplySplitter, AnAnswerCutShortKeepsWhatItHas) {
  HarmonyReplySplitter f;
  std::string out = f.push("<|channel|>final<|message|>Paris is <|").content;
  out += f.finish().content;
  EXPECT_EQ(out, "Paris is <|");  // the held-back "<|" was text after all
  EXPECT_TRUE(f.saw_final());
}

TEST(HarmonyReplySplitter, AGeneratedReplyStreamsReasoningThenAnswer) {
  // What gpt-oss generates after the template's "<|start|>assistant", split as tokens arrive.
  const char* pieces[] = {"<|channel|>", "analysis",  "<|message|>", "User asks",   " capital.",
                          "<|end|>",     "<|start|>", "assistant",   "<|channel|>", "final",
                          "<|message|>", "Paris",     ".",           "<|return|>"};
  HarmonyReplySplitter f;
  std::string reasoning, content;
  for (const char* p : pieces) {
    const HarmonyText t = f.push(p);
    EXPECT_TRUE(t.reasoning.empty() || content.empty()) << "reasoning after the answer began";
    reasoning += t.reasoning;
    content += t.content;
  }
  const HarmonyText rest = f.finish();
  EXPECT_EQ(reasoning + rest.reasoning, "User asks capital.");
  EXPECT_EQ(content + rest.content, "Paris.");
}

TEST(HarmonyReplySplitter, ToolCallsOnTheCommentaryChannelAreNeitherReasoningNorAnswer) {
  HarmonyReplySplitter f;
  HarmonyText t = f.push(
      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant to=functions.get_weather"
      "<|channel|>commentary json<|message|>{\"city\": \"Paris\"}<|call|>");
  const HarmonyText rest = f.finish();
  EXPECT_EQ(t.reasoning + rest.reasoning, "Need weather.");
  EXPECT_EQ(t.content + rest.content, "");
}

}  // namespace
}  // namespace wisp
