#include "tokenizer/pre_tokenizer_scan.h"

#include <optional>
#include <string>

#include "tokenizer/unicode.h"
#include "wisp/error.h"

namespace wisp::pre_tokenizer_detail {

DecodedText decode(std::string_view text) {
  DecodedText d;
  d.cps.reserve(text.size());
  d.flags.reserve(text.size());
  d.offsets.reserve(text.size() + 1);
  std::size_t pos = 0;
  while (pos < text.size()) {
    d.offsets.push_back(static_cast<std::uint32_t>(pos));
    std::optional<char32_t> cp = utf8_decode(text, pos);
    if (!cp) throw Error("pre-tokenizer: invalid UTF-8 at byte " + std::to_string(pos));
    std::uint8_t f = kInRange;
    switch (unicode_class(*cp)) {
      case UnicodeClass::kLetter: f |= kLetter; break;
      case UnicodeClass::kNumber: f |= kNumber; break;
      case UnicodeClass::kPunctuation: f |= kPunctuation; break;
      case UnicodeClass::kMark: f |= kMark; break;
      case UnicodeClass::kSymbol: f |= kSymbol; break;
      default: break;
    }
    if (unicode_is_whitespace(*cp)) f |= kSpace;
    d.cps.push_back(*cp);
    d.flags.push_back(f);
  }
  d.offsets.push_back(static_cast<std::uint32_t>(text.size()));
  return d;
}

}  // namespace wisp::pre_tokenizer_detail
