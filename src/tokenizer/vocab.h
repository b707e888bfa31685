// The tokenizer's vocabulary as plain data: what a GGUF file's tokenizer.ggml.* keys describe,
// decoupled from the file so tests can build one by hand. vocab_gguf.h fills it from a GgufFile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "wisp/token.h"

namespace wisp {

// tokenizer.ggml.token_type values (llama.cpp's llama_token_type).
enum class TokenType : std::int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,      // <bos>, <|im_start|>: matched only when the caller parses specials
  kUserDefined = 4,  // always matched before the model runs, never split
  kUnused = 5,
  kByte = 6,  // <0xNN> byte-fallback pieces
};

// tokenizer.ggml.model
enum class VocabModel {
  kBytePairGpt2,   // "gpt2" (and "gemma4"): BPE, merges by rank, over GPT-2's bytes_to_unicode alphabet or, as
                   // the pre-tokenizer says (PreTokenizerSpec::byte_level), over raw UTF-8 with <0xNN> fallback
  kSentencePiece,  // "llama": SentencePiece BPE, token scores as merge priority, <0xNN> fallback
};

struct Vocab {
  VocabModel model = VocabModel::kBytePairGpt2;
  std::string pre;  // tokenizer.ggml.pre ("smollm", "llama-bpe", "qwen2", ...); "" when absent

  std::vector<std::string> tokens;
  std::vector<float> scores;        // one per token, or empty (all 0)
  std::vector<TokenType> types;     // one per token, or empty (all normal)
  std::vector<std::string> merges;  // "left right", rank = index; byte-level BPE only

  TokenId bos = kNoToken;
  TokenId eos = kNoToken;
  TokenId eot = kNoToken;  // end of turn, when the file names one
  TokenId unk = kNoToken;
  TokenId pad = kNoToken;

  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;  // SentencePiece: prefix " " to text that starts a fragment

  TokenType type_of(TokenId id) const {
    return types.empty() ? TokenType::kNormal : types[static_cast<std::size_t>(id)];
  }
  float score_of(TokenId id) const { return scores.empty() ? 0.0f : scores[static_cast<std::size_t>(id)]; }
  std::size_t size() const { return tokens.size(); }
};

// Defaults llama.cpp applies per model type before the file's own keys override them: a missing
// key must mean the same thing here as there.
Vocab make_vocab_defaults(VocabModel model, const std::string& pre);

}  // namespace wisp
