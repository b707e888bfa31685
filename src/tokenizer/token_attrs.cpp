#include "tokenizer/token_attrs.h"

#include <algorithm>
#include <string_view>

namespace wisp {

namespace {

// Texts llama.cpp treats as end of generation and forces to control (llama-vocab.cpp, "EOG").
constexpr std::string_view kEndOfGenerationTexts[] = {
    "<|eot_id|>",
    "<|im_end|>",
    "<|end|>",
    "<|return|>",
    "<|call|>",
    "<|flush|>",
    "<|calls|>",
    "<end_of_turn>",
    "<|endoftext|>",
    "</s>",
    "<|eom_id|>",
    "<EOT>",
    "_<EOT>",
    "[EOT]",
    "[EOS]",
    "<|end_of_text|>",
    "<end_of_utterance>",
    "<eos>",
    "<turn|>",
    "<|tool_response>",
    "<\xEF\xBD\x9C"
    "end\xE2\x96\x81of\xE2\x96\x81sentence\xEF\xBD\x9C>",
    "[e~[",
};

// Fill-in-the-middle markers: also forced to control (and the pad/repo/separator ones end
// generation), by text, since GGUF files rarely carry their ids.
constexpr std::string_view kFimControlTexts[] = {
    "<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<PRE>", "\xE2\x96\x81<PRE>", "<|code_prefix|>", "<|prefix|>",
    "<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<SUF>", "\xE2\x96\x81<SUF>", "<|code_suffix|>", "<|suffix|>",
    "<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<MID>", "\xE2\x96\x81<MID>", "<|code_middle|>", "<|middle|>",
};
constexpr std::string_view kFimEndTexts[] = {
    "<|fim_pad|>",   "<fim-pad>",  "<fim_pad>", "<PAD>",      "[PAD]",        "<|fim_repo|>",
    "<|repo_name|>", "<fim-repo>", "<REPO>",    "<reponame>", "<|file_sep|>",
};

// gpt-oss's harmony markers: llama.cpp makes them user-defined whatever the file says, so they
// are always rendered and always matched -- a reply's "<|channel|>final<|message|>" reaches the
// caller as text, which is where the final answer is told apart from the analysis.
constexpr std::string_view kAlwaysRenderedTexts[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

template <std::size_t N>
bool in(const std::string_view (&list)[N], std::string_view s) {
  return std::find(std::begin(list), std::end(list), s) != std::end(list);
}

std::uint8_t attr_of_type(TokenType t) {
  switch (t) {
    case TokenType::kNormal: return kAttrNormal;
    case TokenType::kUnknown: return kAttrUnknown;
    case TokenType::kControl: return kAttrControl;
    case TokenType::kUserDefined: return kAttrUserDefined;
    case TokenType::kUnused: return kAttrUnused;
    case TokenType::kByte: return kAttrByte;
    case TokenType::kUndefined: return 0;
  }
  return 0;
}

}  // namespace

TokenAttributes derive_token_attributes(const Vocab& vocab) {
  TokenAttributes out;
  out.attrs.resize(vocab.size());
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    const auto id = static_cast<TokenId>(i);
    const std::string_view text = vocab.tokens[i];
    std::uint8_t a = attr_of_type(vocab.type_of(id));
    const bool ends = in(kEndOfGenerationTexts, text) || in(kFimEndTexts, text);
    if (ends || in(kFimControlTexts, text)) a |= kAttrControl;
    if (ends) out.eog.push_back(id);
    if (in(kAlwaysRenderedTexts, text)) a = kAttrUserDefined;
    out.attrs[i] = a;
  }
  for (TokenId id : {vocab.eos, vocab.eot})
    if (id != kNoToken) out.eog.push_back(id);
  std::sort(out.eog.begin(), out.eog.end());
  out.eog.erase(std::unique(out.eog.begin(), out.eog.end()), out.eog.end());
  // Harmony (and Solar Open) end a message with <|end|> but a turn with <|return|> / <|call|>
  // (<|flush|> / <|calls|>): where those exist, <|end|> is not an end of generation but a
  // user-defined token, as llama.cpp decides it.
  auto eog_text = [&](std::string_view t) {
    return std::any_of(out.eog.begin(), out.eog.end(), [&](TokenId id) { return vocab.tokens[id] == t; });
  };
  const bool has_call = eog_text("<|call|>") || eog_text("<|calls|>");
  if ((eog_text("<|return|>") && has_call) || (has_call && eog_text("<|flush|>"))) {
    for (auto it = out.eog.begin(); it != out.eog.end(); ++it) {
      if (vocab.tokens[*it] == "<|end|>") {
        out.attrs[static_cast<std::size_t>(*it)] = kAttrUserDefined;
        out.eog.erase(it);
        break;
      }
    }
  }
  return out;
}

}  // namespace wisp
