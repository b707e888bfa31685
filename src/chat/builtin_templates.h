// Fallback chat templates for models whose GGUF carries no tokenizer.chat_template (the Gemma 3
// 270M file in models/ is one), and the rule that picks one.
//
// llama.cpp falls back to ChatML whenever the file has no template. That is wrong for Gemma, whose
// turn markers are <start_of_turn>/<end_of_turn>, so wisp looks at the vocabulary first, the way
// llama.cpp's llm_chat_detect_template looks at a template's text for the same markers:
//   1. the file's own template, when present and non-empty;
//   2. else the markers the vocabulary has as tokens, in this order:
//        <start_of_turn> and <end_of_turn>        -> gemma
//        <|start_header_id|> and <|eot_id|>       -> llama3
//        <|im_start|> and <|im_end|>              -> chatml
//        [INST] and [/INST]                       -> mistral
//        <|user|> and <|assistant|>               -> zephyr
//   3. else by architecture: gemma, gemma2, gemma3 -> gemma; everything else -> chatml (llama.cpp's
//      default).
// Each builtin is the published template of a real model, byte for byte (tests/golden/chat/
// templates holds the same text and the golden renders cover it).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"

namespace wisp {

// chatml, gemma, llama2, llama3, mistral, zephyr.
std::vector<std::string_view> builtin_chat_template_names();
std::optional<std::string_view> builtin_chat_template(std::string_view name);
// The model whose published template a builtin reproduces.
std::string_view builtin_chat_template_origin(std::string_view name);

struct ChatTemplateChoice {
  std::string name;    // "gguf" for the file's own template, else the builtin's name
  std::string source;  // the template text
  std::string
      reason;  // one line for the user, e.g. "the GGUF has no chat template; its vocabulary has <start_of_turn>"
};

// `gguf_template`: the file's tokenizer.chat_template, if any. `has_token`: whether the vocabulary
// holds a token with exactly this text.
ChatTemplateChoice choose_chat_template(std::optional<std::string_view> gguf_template, std::string_view architecture,
                                        const std::function<bool(std::string_view)>& has_token);

// choose_chat_template's pick, parsed. When the GGUF's own template does not parse (a Jinja feature
// wisp lacks, or a broken file) the model still chats: the builtin the rule picks for a file without
// a template is used instead, and `choice.reason` starts with the parse error, so every caller
// (wisp chat, wisp serve, the library's ChatTemplate::for_model) tells the user the same thing.
struct ChosenChatTemplate {
  ChatTemplate parsed;
  ChatTemplateChoice choice;
  bool fell_back = false;  // the GGUF's template did not parse
};
ChosenChatTemplate load_chat_template(std::optional<std::string_view> gguf_template, std::string_view architecture,
                                      const std::function<bool(std::string_view)>& has_token);

}  // namespace wisp
