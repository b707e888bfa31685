// Exact text -> id lookup over a vocabulary (views into the vocabulary's strings, which must
// outlive it and not move).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace wisp {

class TokenLookup {
 public:
  explicit TokenLookup(const std::vector<std::string>& tokens) {
    map_.reserve(tokens.size());
    // A later duplicate wins, as in llama.cpp's token_to_id.
    for (std::size_t i = 0; i < tokens.size(); ++i) map_[tokens[i]] = static_cast<TokenId>(i);
  }
  TokenId find(std::string_view text) const {
    auto it = map_.find(text);
    return it == map_.end() ? kNoToken : it->second;
  }

 private:
  std::unordered_map<std::string_view, TokenId> map_;
};

}  // namespace wisp
