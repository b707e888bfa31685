// The fallback templates are the published ones byte for byte (so the golden renders cover them),
// and the choice between the file's own template and a fallback follows the documented rule,
// on the real GGUFs in models/ too: SmolLM2 carries its template, Gemma 3 270M carries none.
#include <gtest/gtest.h>

#include <filesystem>
#include <unordered_set>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"
#include "formats/gguf_file.h"
#include "golden_util.h"

namespace wisp {
namespace {

TEST(ChatBuiltins, EqualThePublishedTemplates) {
  const std::pair<const char*, const char*> files[] = {
      {"chatml", "chatml.jinja"},
      {"gemma", "gemma3-it.jinja"},
      {"llama2", "llama2-chat.jinja"},
      {"llama3", "llama3-instruct.jinja"},
      {"mistral", "mistral-instruct-v0.1.jinja"},
      {"zephyr", "zephyr-tinyllama-chat.jinja"},
  };
  ASSERT_EQ(builtin_chat_template_names().size(), std::size(files));
  for (const auto& [name, file] : files) {
    SCOPED_TRACE(name);
    const auto source = builtin_chat_template(name);
    ASSERT_TRUE(source.has_value());
    EXPECT_EQ(std::string(*source), chat_test::read_file(chat_test::golden_dir() + "/templates/" + file));
    EXPECT_FALSE(builtin_chat_template_origin(name).empty());
    EXPECT_NO_THROW(ChatTemplate::parse(*source));
  }
  EXPECT_FALSE(builtin_chat_template("nonexistent").has_value());
}

std::function<bool(std::string_view)> vocabulary(std::initializer_list<std::string_view> tokens) {
  auto set = std::make_shared<std::unordered_set<std::string>>();
  for (auto t : tokens) set->emplace(t);
  return [set](std::string_view t) { return set->count(std::string(t)) > 0; };
}

TEST(ChatBuiltins, ChoiceRule) {
  const auto none = vocabulary({});
  auto choice = choose_chat_template("{{ x }}", "gemma3", vocabulary({"<start_of_turn>", "<end_of_turn>"}));
  EXPECT_EQ(choice.name, "gguf");
  EXPECT_EQ(choice.source, "{{ x }}");

  EXPECT_EQ(choose_chat_template(std::nullopt, "gemma3", vocabulary({"<start_of_turn>", "<end_of_turn>"})).name,
            "gemma");
  EXPECT_EQ(choose_chat_template("", "llama", vocabulary({"<start_of_turn>", "<end_of_turn>"})).name, "gemma");
  EXPECT_EQ(choose_chat_template(std::nullopt, "gemma2", none).name, "gemma");
  EXPECT_EQ(choose_chat_template(std::nullopt, "gemma", nullptr).name, "gemma");
  EXPECT_EQ(choose_chat_template(std::nullopt, "llama", vocabulary({"<|start_header_id|>", "<|eot_id|>"})).name,
            "llama3");
  EXPECT_EQ(choose_chat_template(std::nullopt, "qwen2", vocabulary({"<|im_start|>", "<|im_end|>"})).name, "chatml");
  EXPECT_EQ(choose_chat_template(std::nullopt, "llama", vocabulary({"[INST]", "[/INST]"})).name, "mistral");
  EXPECT_EQ(choose_chat_template(std::nullopt, "llama", vocabulary({"<|user|>", "<|assistant|>"})).name, "zephyr");
  // One marker of a pair is not enough.
  EXPECT_EQ(choose_chat_template(std::nullopt, "llama", vocabulary({"<start_of_turn>"})).name, "chatml");
  choice = choose_chat_template(std::nullopt, "mystery", none);
  EXPECT_EQ(choice.name, "chatml");
  EXPECT_EQ(choice.source, std::string(*builtin_chat_template("chatml")));
  EXPECT_NE(choice.reason.find("no chat template"), std::string::npos);
}

// A GGUF template wisp cannot parse still leaves the model able to chat: the builtin the vocabulary
// points to, with the parse error in the reason every caller prints.
TEST(ChatBuiltins, UnparsableGgufTemplateFallsBackToTheVocabularysBuiltin) {
  const auto gemma_vocab = vocabulary({"<start_of_turn>", "<end_of_turn>"});
  ChosenChatTemplate ok = load_chat_template("{{ bos_token }}hi", "llama", gemma_vocab);
  EXPECT_FALSE(ok.fell_back);
  EXPECT_EQ(ok.choice.name, "gguf");
  EXPECT_EQ(ok.parsed.source(), "{{ bos_token }}hi");

  ChosenChatTemplate bad = load_chat_template("{% for m in messages %}{{ m.content ", "llama", gemma_vocab);
  EXPECT_TRUE(bad.fell_back);
  EXPECT_EQ(bad.choice.name, "gemma");
  EXPECT_EQ(bad.parsed.source(), std::string(*builtin_chat_template("gemma")));
  EXPECT_NE(bad.choice.reason.find("does not parse"), std::string::npos) << bad.choice.reason;
  EXPECT_NE(bad.choice.reason.find("<start_of_turn>"), std::string::npos) << bad.choice.reason;

  ChosenChatTemplate none = load_chat_template(std::nullopt, "mystery", vocabulary({}));
  EXPECT_FALSE(none.fell_back);
  EXPECT_EQ(none.choice.name, "chatml");
}

struct RealModel {
  std::string chat_template;
  bool has_template = false;
  std::string architecture;
  std::unordered_set<std::string> tokens;
};

std::optional<RealModel> load_model(const std::string& file) {
  const std::string path = std::string(WISP_MODELS_DIR) + "/" + file;
  if (!std::filesystem::exists(path)) return std::nullopt;
  const GgufFile gguf = GgufFile::open(path);
  RealModel m;
  if (auto t = gguf.get_string_opt("tokenizer.chat_template")) {
    m.chat_template = std::string(*t);
    m.has_template = true;
  }
  m.architecture = std::string(gguf.architecture());
  for (std::string_view token : gguf.get("tokenizer.ggml.tokens").array_strings()) m.tokens.emplace(token);
  return m;
}

ChatTemplateChoice choose_for(const RealModel& m) {
  return choose_chat_template(m.has_template ? std::optional<std::string_view>(m.chat_template) : std::nullopt,
                              m.architecture, [&m](std::string_view t) { return m.tokens.count(std::string(t)) > 0; });
}

TEST(ChatBuiltins, SmolLM2UsesItsOwnTemplate) {
  const auto model = load_model("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (!model) GTEST_SKIP() << "models/SmolLM2-135M-Instruct.Q4_1.gguf not present";
  ASSERT_TRUE(model->has_template);
  EXPECT_EQ(model->chat_template,
            chat_test::read_file(chat_test::golden_dir() + "/templates/smollm2-135m-instruct.jinja"));
  const auto choice = choose_for(*model);
  EXPECT_EQ(choice.name, "gguf");
  const auto rendered = ChatTemplate::parse(choice.source).render({{"user", "Hi"}});
  EXPECT_EQ(rendered,
            "<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n"
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatBuiltins, Gemma3WithoutTemplateGetsGemma) {
  const auto model = load_model("gemma-3-270m-q4_k_m.gguf");
  if (!model) GTEST_SKIP() << "models/gemma-3-270m-q4_k_m.gguf not present";
  EXPECT_FALSE(model->has_template) << "the Gemma 3 270M GGUF was expected to carry no chat template";
  const auto choice = choose_for(*model);
  EXPECT_EQ(choice.name, "gemma");
  EXPECT_NE(choice.reason.find("<start_of_turn>"), std::string::npos) << choice.reason;
  ChatRenderOptions options;
  options.bos_token = "<bos>";
  const auto rendered = ChatTemplate::parse(choice.source).render({{"system", "Be brief."}, {"user", " Hi "}}, options);
  EXPECT_EQ(rendered, "<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
}

}  // namespace
}  // namespace wisp
