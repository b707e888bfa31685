// wisp::TokenStreamDecoder: incremental detokenization for streaming output. Feeds token ids one
// at a time and returns only text that is complete UTF-8. A character split across tokens (an
// emoji as four byte-level pieces, a CJK character as <0xE4><0xB8><0xAD>) is held back until its
// last byte arrives, so a terminal never receives half a character.
//
// Bytes that can never become valid UTF-8 are not held forever: each maximal invalid subsequence
// is emitted as U+FFFD (the Unicode-recommended substitution), and finish() does the same for a
// sequence left incomplete at the end of the stream.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "wisp/tokenizer.h"

namespace wisp {

class TokenStreamDecoder {
 public:
  // `tokenizer` must outlive the decoder.
  explicit TokenStreamDecoder(const Tokenizer& tokenizer, bool render_special = false)
      : tokenizer_(&tokenizer), render_special_(render_special) {}

  // Appends the token's bytes and returns whatever is now printable (possibly "").
  std::string push(TokenId id);
  // Raw bytes, for callers that produce pieces themselves.
  std::string push_bytes(std::string_view bytes);
  // End of stream: returns the held-back tail, an incomplete sequence rendered as U+FFFD.
  std::string finish();
  // Drops any held-back bytes (a new answer starts).
  void reset() { pending_.clear(); }
  // Bytes held back, waiting for the rest of a character.
  std::size_t pending_bytes() const { return pending_.size(); }

 private:
  const Tokenizer* tokenizer_;
  bool render_special_;
  std::string pending_;
};

}  // namespace wisp
