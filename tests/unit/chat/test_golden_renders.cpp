// Every golden render byte for byte: the published templates of each supported family over the
// golden conversations (and tools, tool calls, content parts, reasoning), plus one small template
// per piece of Jinja semantics. Errors must match too: a template's raise_exception message
// exactly, and jinja's own runtime failures as runtime errors.
#include <gtest/gtest.h>

#include <map>

#include "chat/chat_template.h"
#include "golden_util.h"

namespace wisp {
namespace {

using chat_test::golden;
using nlohmann::ordered_json;

std::string case_source(const ordered_json& c) {
  return c.contains("template") ? chat_test::template_source(c["template"].get<std::string>())
                                : c["source"].get<std::string>();
}

TEST(ChatGolden, GoldenFileIsComplete) {
  const auto& g = golden();
  EXPECT_GE(g["cases"].size(), 400u);
  std::map<std::string, int> per_template;
  for (const auto& c : g["cases"]) {
    if (c.contains("template")) ++per_template[c["template"].get<std::string>()];
  }
  for (const auto& [name, info] : g["templates"].items()) {
    EXPECT_GE(per_template[name], 20) << name << " has too few golden cases";
  }
}

TEST(ChatGolden, EveryCaseMatchesJinja) {
  const std::tm now = chat_test::golden_now();
  std::map<std::string, ChatTemplate> parsed;
  int checked = 0;
  for (const auto& c : golden()["cases"]) {
    const std::string name = c["name"].get<std::string>();
    SCOPED_TRACE(name);
    const std::string source = case_source(c);
    auto it = parsed.find(source);
    if (it == parsed.end()) {
      try {
        it = parsed.emplace(source, ChatTemplate::parse(source)).first;
      } catch (const ChatTemplateError& e) {
        ADD_FAILURE() << "parse failed: " << e.what();
        continue;
      }
    }
    const ChatTemplate& tmpl = it->second;
    if (c.contains("expected")) {
      try {
        EXPECT_EQ(tmpl.render_context(c["context"], now), c["expected"].get<std::string>());
      } catch (const ChatTemplateError& e) {
        ADD_FAILURE() << "render failed: " << e.what();
      }
    } else {
      const auto& error = c["error"];
      try {
        const std::string out = tmpl.render_context(c["context"], now);
        ADD_FAILURE() << "expected an error (" << error.dump() << "), got: " << out;
      } catch (const ChatTemplateError& e) {
        if (error["kind"] == "raised") {
          EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Raised) << e.what();
          EXPECT_EQ(e.detail(), error["message"].get<std::string>());
        } else {
          EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Runtime) << e.what() << " / jinja: " << error["message"];
        }
        EXPECT_TRUE(e.has_location()) << e.what();
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(golden()["cases"].size()));
}

// The convenience API (role/content pairs and options) renders what the full context renders.
TEST(ChatGolden, MessageApiMatchesContext) {
  int compared = 0;
  for (const auto& c : golden()["cases"]) {
    if (!c.contains("template") || !c.contains("expected")) continue;
    const auto& ctx = c["context"];
    if (ctx.size() != 4) continue;  // only messages, add_generation_prompt, bos_token, eos_token
    std::vector<ChatMessage> messages;
    bool plain = true;
    for (const auto& m : ctx["messages"]) {
      plain = plain && m.size() == 2 && m["content"].is_string();
      if (plain) messages.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
    }
    if (!plain) continue;
    SCOPED_TRACE(c["name"].get<std::string>());
    ChatRenderOptions options;
    options.add_generation_prompt = ctx["add_generation_prompt"].get<bool>();
    options.bos_token = ctx["bos_token"].get<std::string>();
    options.eos_token = ctx["eos_token"].get<std::string>();
    options.now = chat_test::golden_now();
    const auto tmpl = ChatTemplate::parse(chat_test::template_source(c["template"].get<std::string>()));
    EXPECT_EQ(tmpl.render(messages, options), c["expected"].get<std::string>());
    ++compared;
  }
  EXPECT_GE(compared, 200);
}

TEST(ChatGolden, SyntaxErrorsOnJinjasLine) {
  for (const auto& s : golden()["syntax_errors"]) {
    const std::string source = s["source"].get<std::string>();
    SCOPED_TRACE(source);
    try {
      ChatTemplate::parse(source);
      ADD_FAILURE() << "parsed without error; jinja2 says: " << s["message"];
    } catch (const ChatTemplateError& e) {
      EXPECT_EQ(e.kind(), ChatTemplateError::Kind::Syntax) << e.what();
      EXPECT_GE(e.line(), 1);
      EXPECT_GE(e.column(), 1);
      if (!s["line"].is_null()) {
        EXPECT_EQ(e.line(), s["line"].get<int>()) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace wisp
