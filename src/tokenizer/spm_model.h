// SentencePiece BPE as llama.cpp runs it for tokenizer.ggml.model = "llama" (LLaMA 1/2, Gemma):
// the text (spaces already escaped to U+2581 "▁") starts as one symbol per code point; the adjacent
// pair whose concatenation is the highest-scoring vocabulary token merges first (leftmost on ties),
// until no adjacent pair forms a token. Final symbols that are not tokens fall back to <0xNN> byte
// tokens. There is no word pre-splitting: the whole fragment is one merge problem.
#pragma once

#include <string_view>
#include <vector>

#include "tokenizer/token_lookup.h"
#include "tokenizer/vocab.h"

namespace wisp {

// U+2581 LOWER ONE EIGHTH BLOCK, SentencePiece's visible space.
inline constexpr std::string_view kSpmSpace = "\xE2\x96\x81";

class SentencePieceModel {
 public:
  // `vocab` and `lookup` must outlive the model.
  SentencePieceModel(const Vocab& vocab, const TokenLookup& lookup);

  // Tokenizes escaped, valid UTF-8 text, appending ids to `out`. Throws wisp::Error when a byte
  // has to fall back and the vocabulary has no token for it.
  void encode(std::string_view escaped, std::vector<TokenId>& out) const;

  // The token for raw byte b: "<0xNN>", else the one-byte string itself, else kNoToken.
  TokenId byte_token(unsigned char b) const { return byte_token_[b]; }

 private:
  const Vocab& vocab_;
  const TokenLookup& lookup_;
  TokenId byte_token_[256];
};

}  // namespace wisp
