#include "tokenizer/stream_decoder.h"

#include "tokenizer/unicode.h"

namespace wisp {

namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
}

std::string TokenStreamDecoder::push(TokenId id) { return push_bytes(tokenizer_->token_to_piece(id, render_special_)); }

std::string TokenStreamDecoder::push_bytes(std::string_view bytes) {
  pending_.append(bytes);
  std::string out;
  std::size_t pos = 0;
  while (pos < pending_.size()) {
    const std::size_t start = pos;
    if (utf8_decode(pending_, pos)) {
      out.append(pending_, start, pos - start);
      continue;
    }
    // Not a complete character here. The longest prefix of what follows that could still grow
    // into one decides: if it runs to the end of the buffer, wait for more bytes; otherwise those
    // bytes are a dead end and become one U+FFFD.
    const std::string_view rest(pending_.data() + start, pending_.size() - start);
    std::size_t viable = 0;
    for (std::size_t k = 1; k <= 3 && k <= rest.size(); ++k)
      if (utf8_is_incomplete_prefix(rest.substr(0, k))) viable = k;
    if (viable == rest.size()) {
      pending_.erase(0, start);
      return out;
    }
    out += kReplacement;
    pos = start + (viable == 0 ? 1 : viable);
  }
  pending_.clear();
  return out;
}

std::string TokenStreamDecoder::finish() {
  std::string out = pending_.empty() ? std::string() : std::string(kReplacement);
  pending_.clear();
  return out;
}

}  // namespace wisp
