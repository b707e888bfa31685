// Byte-level BPE (GPT-2 style): each pre-tokenized word is spelled in the byte-level alphabet and
// its symbols are merged pairwise, always the adjacent pair of lowest merge rank first (leftmost on
// ties), until no listed merge applies; each final symbol is then looked up as a token.
// SentencePiece-style BPE (PreTokenizerSpec::byte_level false: Gemma 4, Sarvam MoE) merges the
// word's own UTF-8 characters instead, and spells a final symbol that is no token as <0xNN> tokens.
//
// Symbols are interned strings: every vocabulary token keeps its id, and strings that occur only
// as a merge part or result get ids past the vocabulary. Merging is then integer work on a
// (left, right) -> (rank, result) table, with no string building per step.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/token_lookup.h"
#include "tokenizer/vocab.h"

namespace wisp {

class BytePairModel {
 public:
  // `vocab` and `lookup` must outlive the model. Throws wisp::Error on a malformed merge list.
  BytePairModel(const Vocab& vocab, const TokenLookup& lookup, PreTokenizerSpec pre);

  // Tokenizes one special-free fragment of valid UTF-8 text, appending ids to `out`.
  void encode(std::string_view text, std::vector<TokenId>& out) const;

  const ByteLevelAlphabet& alphabet() const { return alphabet_; }

 private:
  using SymbolId = std::uint32_t;
  struct Merge {
    std::uint32_t rank;
    SymbolId result;
  };
  SymbolId intern(std::string_view s);
  void encode_word(std::string_view raw, std::vector<TokenId>& out) const;
  void emit_symbol(SymbolId s, std::string_view raw, std::vector<TokenId>& out) const;
  SymbolId symbol_of(std::string_view s) const;

  const Vocab& vocab_;
  const TokenLookup& lookup_;
  PreTokenizerSpec pre_;
  ByteLevelAlphabet alphabet_;
  std::vector<std::string> extra_symbols_;  // symbol id n_vocab + i spells extra_symbols_[i]
  std::unordered_map<std::string, SymbolId> extra_index_;
  std::unordered_map<std::uint64_t, Merge> merges_;  // (left << 32 | right)
  SymbolId byte_symbol_[256];                        // the symbol of each byte's alphabet spelling
  TokenId byte_token_[256];                          // raw BPE: the <0xNN> token of each byte, or kNoToken
};

}  // namespace wisp
