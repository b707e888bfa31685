// Splits text at special-token occurrences before any subword model runs, so that "<|im_start|>"
// becomes one id and is never merged with its neighbours.
//
// Which tokens: user-defined tokens always; control and unknown tokens only when the caller
// parses specials (a token that is both, like Gemma 3's "</s>", counts as control). Precedence reproduces llama.cpp
// exactly: tokens are taken longest first (ties: lower id first), each claiming its leftmost non-overlapping
// occurrences in the text the longer ones left unclaimed. A trie finds every occurrence in one pass, so the cost does
// not grow with the number of special tokens (Gemma has 6000+).
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/vocab.h"

namespace wisp {

struct Fragment {
  bool is_token;
  TokenId token;        // when is_token
  std::uint32_t begin;  // byte range in the partitioned text, when !is_token
  std::uint32_t end;
};

class SpecialTokenMatcher {
 public:
  // `attrs` are the effective attributes (token_attrs.h), one per text.
  SpecialTokenMatcher(const std::vector<std::string>& texts, const std::vector<std::uint8_t>& attrs);

  // Appends text and token fragments covering `text`, in order.
  void partition(std::string_view text, bool parse_special, std::vector<Fragment>& out) const;

 private:
  struct Entry {
    TokenId id;
    std::uint32_t length;
    std::uint32_t priority;  // 0 = claims first
    bool always;             // user-defined: matched even when specials are not parsed
  };
  static constexpr std::uint32_t kNoEntry = 0xFFFFFFFF;
  struct Node {
    std::uint32_t entry = kNoEntry;  // index into entries_ of the token ending here
  };
  std::uint32_t child(std::uint32_t node, unsigned char byte) const;

  std::vector<Entry> entries_;
  std::vector<Node> nodes_;                                 // node 0 is the root
  std::unordered_map<std::uint64_t, std::uint32_t> edges_;  // (node << 8 | byte) -> child node
  bool root_has_child_[256] = {};
};

}  // namespace wisp
