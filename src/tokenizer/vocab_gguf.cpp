#include "tokenizer/vocab_gguf.h"

#include "wisp/error.h"

namespace wisp {

namespace {

[[noreturn]] void fail(const GgufFile& f, std::string_view key, const std::string& why) {
  throw Error(f.path() + ": metadata key '" + std::string(key) + "': " + why);
}

const GgufValue* find_array(const GgufFile& f, std::string_view key) {
  const GgufValue* v = f.find(key);
  if (v != nullptr && !v->is_array()) fail(f, key, "expected an array");
  return v;
}

// Special-token ids: an id outside the vocabulary is ignored (the default stays), as llama.cpp
// does, because shipped files with a stray padding id still tokenize correctly.
void read_id(const GgufFile& f, std::string_view key, std::size_t n_tokens, TokenId& id) {
  std::optional<std::uint64_t> v = f.get_u64_opt(key);
  if (v && *v < n_tokens) id = static_cast<TokenId>(*v);
}

void read_flag(const GgufFile& f, std::string_view key, bool& flag) {
  if (std::optional<bool> v = f.get_bool_opt(key)) flag = *v;
}

}  // namespace

Vocab vocab_from_gguf(const GgufFile& f) {
  const std::string_view model_key = "tokenizer.ggml.model";
  std::optional<std::string_view> model_name = f.get_string_opt(model_key);
  if (!model_name) fail(f, model_key, "missing (the file carries no tokenizer)");
  std::string pre(f.get_string_opt("tokenizer.ggml.pre").value_or(""));

  VocabModel model;
  if (*model_name == "gpt2") {
    model = VocabModel::kBytePairGpt2;
  } else if (*model_name == "gemma4") {
    // Gemma 4's BPE: its own pre-tokenizer whatever tokenizer.ggml.pre says, as llama.cpp does.
    model = VocabModel::kBytePairGpt2;
    pre = "gemma4";
  } else if (*model_name == "llama") {
    model = VocabModel::kSentencePiece;
  } else {
    fail(f, model_key,
         "tokenizer model '" + std::string(*model_name) +
             "' is not supported (wisp implements 'gpt2' and 'gemma4' BPE and 'llama' SentencePiece)");
  }
  Vocab v = make_vocab_defaults(model, pre);

  const std::string_view tokens_key = "tokenizer.ggml.tokens";
  const GgufValue* tokens = find_array(f, tokens_key);
  if (tokens == nullptr) fail(f, tokens_key, "missing");
  if (tokens->array_type() != GgufValueType::kString) fail(f, tokens_key, "expected an array of strings");
  const auto& texts = tokens->array_strings();
  if (texts.empty()) fail(f, tokens_key, "the vocabulary is empty");
  if (texts.size() > static_cast<std::size_t>(INT32_MAX)) fail(f, tokens_key, "too many tokens");
  v.tokens.reserve(texts.size());
  for (std::string_view t : texts) v.tokens.emplace_back(t);
  const std::size_t n = v.tokens.size();

  const std::string_view scores_key = "tokenizer.ggml.scores";
  if (const GgufValue* scores = find_array(f, scores_key)) {
    if (scores->array_type() != GgufValueType::kFloat32 && scores->array_type() != GgufValueType::kInt32)
      fail(f, scores_key, "expected an array of float32 or int32");
    if (scores->array_size() < n)
      fail(f, scores_key, std::to_string(scores->array_size()) + " scores for " + std::to_string(n) + " tokens");
    v.scores = scores->array_as<float>();
    v.scores.resize(n);
  }

  const std::string_view types_key = "tokenizer.ggml.token_type";
  if (const GgufValue* types = find_array(f, types_key)) {
    if (types->array_type() != GgufValueType::kInt32) fail(f, types_key, "expected an array of int32");
    if (types->array_size() < n)
      fail(f, types_key, std::to_string(types->array_size()) + " token types for " + std::to_string(n) + " tokens");
    std::vector<std::int32_t> raw = types->array_as<std::int32_t>();
    v.types.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      // Unknown type codes behave as "undefined", as in llama.cpp.
      std::int32_t t = raw[i];
      v.types.push_back(t >= 0 && t <= 6 ? static_cast<TokenType>(t) : TokenType::kUndefined);
    }
  }

  const std::string_view merges_key = "tokenizer.ggml.merges";
  if (const GgufValue* merges = find_array(f, merges_key)) {
    if (merges->array_type() != GgufValueType::kString) fail(f, merges_key, "expected an array of strings");
    v.merges.reserve(merges->array_size());
    for (std::string_view m : merges->array_strings()) v.merges.emplace_back(m);
  } else if (model == VocabModel::kBytePairGpt2) {
    fail(f, merges_key, "missing (a 'gpt2' tokenizer needs its BPE merges)");
  }

  read_id(f, "tokenizer.ggml.bos_token_id", n, v.bos);
  read_id(f, "tokenizer.ggml.eos_token_id", n, v.eos);
  read_id(f, "tokenizer.ggml.eot_token_id", n, v.eot);
  read_id(f, "tokenizer.ggml.unknown_token_id", n, v.unk);
  read_id(f, "tokenizer.ggml.padding_token_id", n, v.pad);
  read_flag(f, "tokenizer.ggml.add_bos_token", v.add_bos);
  read_flag(f, "tokenizer.ggml.add_eos_token", v.add_eos);
  read_flag(f, "tokenizer.ggml.add_space_prefix", v.add_space_prefix);
  return v;
}

}  // namespace wisp
