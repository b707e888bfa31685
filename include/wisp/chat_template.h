// wisp::ChatTemplate: a model's chat template, parsed once and rendered per conversation. The renderer
// is a Jinja2 subset written for chat templates, and its output is meant to be byte-identical to
// what Hugging Face's apply_chat_template renders with jinja2 (trim_blocks and lstrip_blocks on,
// loop controls, HF's tojson / raise_exception / strftime_now); tests/golden/chat holds the proof.
//
//   auto tmpl = wisp::ChatTemplate::for_model(*model);          // or ChatTemplate::parse(source)
//   std::string prompt = tmpl.render({{"system", "Be brief."}, {"user", "Hi"}},
//                                    wisp::chat_render_options(tokenizer));
//
// Supported: {{ }}, {% %}, {# #}, whitespace control (- and +), if/elif/else, for (loop.*,
// else, `if` filter, tuple targets, break/continue), set (tuples, namespace attributes, block
// form), macros with defaults, the filters and tests in builtins.h, str and dict methods,
// slicing, Python arithmetic and comparisons. Not supported (a syntax error at parse time):
// template inheritance and includes, call blocks, filter blocks, recursive loops, *args/**kwargs.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wisp/chat_template_error.h"

namespace wisp {

class Model;
class Tokenizer;

namespace jinja {
struct Program;
}

struct ChatMessage {
  std::string role;
  std::string content;
};

struct ChatRenderOptions {
  bool add_generation_prompt = true;
  std::string bos_token;
  std::string eos_token;
  // More template variables, e.g. tools, date_string, enable_thinking. They are set after the
  // four above, so they may override them.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  // The clock strftime_now reads; nullopt: local time at render. Tests fix it.
  std::optional<std::tm> now;
};

class ChatTemplate {
 public:
  // Throws ChatTemplateError(Syntax) with line and column.
  static ChatTemplate parse(std::string_view source);
  // The template a model's GGUF carries (tokenizer.chat_template) or, for a file without one, the
  // built-in template its architecture and vocabulary point to (Gemma's <start_of_turn>, ChatML's
  // <|im_start|>, ...), as `wisp chat` and `wisp serve` choose. A GGUF template that does not parse
  // is replaced by the built-in one the same rule picks for a file without a template.
  static ChatTemplate for_model(const Model& model);

  // Throws ChatTemplateError(Runtime) or (Raised) — a template rejecting the conversation, e.g.
  // "Conversation roles must alternate user/assistant/user/assistant/..." — with its location.
  std::string render(const std::vector<ChatMessage>& messages, const ChatRenderOptions& options = {}) const;
  // The same with messages as JSON, for fields beyond role and content (content as a list of
  // parts, tool_calls, tool_call_id, reasoning_content). `messages` must be an array.
  std::string render_json(const nlohmann::ordered_json& messages, const ChatRenderOptions& options = {}) const;

  // Renders with exactly `variables` (a JSON object) as the template's variables: no messages,
  // tokens or add_generation_prompt are added. For callers that build the whole context themselves
  // (the golden tests pass what jinja2 was given).
  std::string render_context(const nlohmann::ordered_json& variables, std::optional<std::tm> now = std::nullopt) const;

  const std::string& source() const { return source_; }

 private:
  ChatTemplate() = default;  // only parse() makes one, so every ChatTemplate has a program

  std::string source_;
  std::shared_ptr<const jinja::Program> program_;
};

// Render options with the tokenizer's BOS and EOS text, for templates that print them themselves
// (Llama 3, Gemma); tokenize such a prompt with add_special = false or BOS comes twice.
ChatRenderOptions chat_render_options(const Tokenizer& tokenizer, bool add_generation_prompt = true);

}  // namespace wisp
