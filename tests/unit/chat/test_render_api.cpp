// The ChatTemplate API around the interpreter: options, extra variables, bad arguments, the
// default clock, resource limits, and concurrent renders of one parsed template.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"

namespace wisp {
namespace {

TEST(ChatRenderApi, OptionsAndExtraVariables) {
  const auto tmpl = ChatTemplate::parse(
      "{{ bos_token }}{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
      "{% if add_generation_prompt %}<assistant>{% endif %}{{ eos_token }}"
      "{% if tools %} tools={{ tools|length }}{% endif %}{{ ' ' ~ flag if flag is defined }}");
  ChatRenderOptions options;
  EXPECT_EQ(tmpl.render({{"user", "hi"}}, options), "<user>hi<assistant>");
  options.add_generation_prompt = false;
  options.bos_token = "<s>";
  options.eos_token = "</s>";
  options.extra = {{"tools", nlohmann::ordered_json::array({{{"name", "f"}}, {{"name", "g"}}})}, {"flag", "on"}};
  EXPECT_EQ(tmpl.render({{"user", "hi"}, {"assistant", "yo"}}, options), "<s><user>hi<assistant>yo</s> tools=2 on");
  options.extra = {{"bos_token", "[BOS]"}};  // extra variables override the standard ones
  EXPECT_EQ(tmpl.render({}, options), "[BOS]</s>");
}

TEST(ChatRenderApi, JsonMessages) {
  const auto tmpl = ChatTemplate::parse(
      "{% for m in messages %}{{ m.role }}:{% if m.content is string %}{{ m.content }}"
      "{% else %}{% for p in m.content %}[{{ p.type }}]{% endfor %}{% endif %}"
      "{% if m.tool_calls %}{{ m.tool_calls[0].function.arguments|tojson }}{% endif %};{% endfor %}");
  const auto messages = nlohmann::ordered_json::parse(R"([
    {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "what?"}]},
    {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"z": 1, "a": [true, null]}}}]}
  ])");
  EXPECT_EQ(tmpl.render_json(messages), "user:[image][text];assistant:{\"z\": 1, \"a\": [true, null]};");
  EXPECT_THROW(tmpl.render_json(nlohmann::ordered_json::object()), ChatTemplateError);
  ChatRenderOptions bad;
  bad.extra = nlohmann::ordered_json::array();
  EXPECT_THROW(tmpl.render({}, bad), ChatTemplateError);
  EXPECT_THROW(tmpl.render_context(nlohmann::ordered_json::array()), ChatTemplateError);
}

TEST(ChatRenderApi, StrftimeNowReadsTheClock) {
  const auto tmpl = ChatTemplate::parse("{{ strftime_now('%Y') }}");
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&t, &local);
  EXPECT_EQ(tmpl.render({}), std::to_string(local.tm_year + 1900));
  ChatRenderOptions fixed;
  fixed.now = std::tm{};
  fixed.now->tm_year = 99;
  fixed.now->tm_mday = 1;
  EXPECT_EQ(tmpl.render({}, fixed), "1999");
}

TEST(ChatRenderApi, LimitsAreErrorsNotCrashes) {
  const auto recursion = ChatTemplate::parse("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}");
  try {
    recursion.render({});
    FAIL() << "no exception";
  } catch (const ChatTemplateError& e) {
    EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Runtime);
    EXPECT_NE(e.detail().find("recursion"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ChatTemplate::parse("{{ range(1000000)|length }}").render({}), ChatTemplateError);
  EXPECT_THROW(ChatTemplate::parse("{{ 9223372036854775807 + 1 }}").render({}), ChatTemplateError);
  EXPECT_THROW(ChatTemplate::parse("{{ 2 ** 64 }}").render({}), ChatTemplateError);
}

TEST(ChatRenderApi, ConcurrentRendersOfOneTemplate) {
  const auto tmpl = ChatTemplate::parse(std::string(*builtin_chat_template("gemma")));
  std::vector<ChatMessage> messages;
  for (int i = 0; i < 200; ++i) messages.push_back({i % 2 ? "assistant" : "user", "turn " + std::to_string(i)});
  ChatRenderOptions options;
  options.bos_token = "<bos>";
  const std::string expected = tmpl.render(messages, options);
  EXPECT_TRUE(expected.starts_with("<bos><start_of_turn>user\nturn 0<end_of_turn>\n<start_of_turn>model\n"))
      << expected;
  std::vector<std::thread> threads;
  std::vector<std::string> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] { results[static_cast<std::size_t>(t)] = tmpl.render(messages, options); });
  }
  for (auto& th : threads) th.join();
  for (const auto& r : results) EXPECT_EQ(r, expected);
}

}  // namespace
}  // namespace wisp
