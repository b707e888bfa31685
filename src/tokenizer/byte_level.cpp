#include "tokenizer/byte_level.h"

#include "tokenizer/unicode.h"

namespace wisp {

ByteLevelAlphabet::ByteLevelAlphabet() {
  cp_to_byte_.fill(-1);
  auto printable = [](int b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
  };
  int next = 0;
  for (int b = 0; b < 256; ++b) {
    char32_t cp = printable(b) ? static_cast<char32_t>(b) : static_cast<char32_t>(256 + next++);
    byte_to_cp_[b] = cp;
    utf8_append(byte_to_utf8_[b], cp);
    cp_to_byte_[cp] = static_cast<std::int16_t>(b);
  }
}

std::optional<std::uint8_t> ByteLevelAlphabet::byte_of(char32_t cp) const {
  if (cp >= cp_to_byte_.size() || cp_to_byte_[cp] < 0) return std::nullopt;
  return static_cast<std::uint8_t>(cp_to_byte_[cp]);
}

void ByteLevelAlphabet::encode(std::string_view bytes, std::string& out) const {
  for (char c : bytes) out += byte_to_utf8_[static_cast<std::uint8_t>(c)];
}

std::string ByteLevelAlphabet::decode(std::string_view spelled) const {
  std::string out;
  out.reserve(spelled.size());
  std::size_t pos = 0;
  while (pos < spelled.size()) {
    const std::size_t start = pos;
    std::optional<char32_t> cp = utf8_decode(spelled, pos);
    if (!cp) {
      out.push_back(spelled[pos++]);  // not UTF-8 at all: keep the byte
      continue;
    }
    if (std::optional<std::uint8_t> b = byte_of(*cp)) {
      out.push_back(static_cast<char>(*b));
    } else {
      out.append(spelled.substr(start, pos - start));
    }
  }
  return out;
}

}  // namespace wisp
