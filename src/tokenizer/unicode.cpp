#include "tokenizer/unicode.h"

#include <algorithm>

namespace wisp {

using unicode_detail::kClassRangeCount;
using unicode_detail::kClassRanges;

const char* unicode_table_version() { return unicode_detail::kUnicodeVersion; }

UnicodeClass unicode_class(char32_t cp) {
  // ASCII dominates real text; answer it without the binary search.
  if (cp < 0x80) {
    if ((cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z')) return UnicodeClass::kLetter;
    if (cp >= '0' && cp <= '9') return UnicodeClass::kNumber;
    if (cp < 0x20 || cp == 0x7F) return UnicodeClass::kControl;
    if (cp == ' ') return UnicodeClass::kSeparator;
    switch (cp) {
      case '$':
      case '+':
      case '<':
      case '=':
      case '>':
      case '^':
      case '`':
      case '|':
      case '~': return UnicodeClass::kSymbol;
      default: return UnicodeClass::kPunctuation;
    }
  }
  if (cp > 0x10FFFF) return UnicodeClass::kUnassigned;
  const auto* end = kClassRanges + kClassRangeCount;
  const auto* it = std::upper_bound(kClassRanges, end, cp,
                                    [](char32_t c, const unicode_detail::ClassRange& r) { return c < r.first; });
  return (it - 1)->cls;  // kClassRanges[0].first == 0, so it > kClassRanges
}

bool unicode_is_whitespace(char32_t cp) {
  if (cp < 0x80) return cp == ' ' || (cp >= 0x09 && cp <= 0x0D);
  const char32_t* begin = unicode_detail::kWhiteSpace;
  const char32_t* end = begin + unicode_detail::kWhiteSpaceCount;
  return std::binary_search(begin, end, cp);
}

std::optional<char32_t> utf8_decode(std::string_view s, std::size_t& pos) {
  if (pos >= s.size()) return std::nullopt;
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  std::size_t len;
  char32_t cp;
  char32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return std::nullopt;  // continuation byte or 0xF8..0xFF as a lead
  }
  if (s.size() - pos < len) return std::nullopt;
  for (std::size_t i = 1; i < len; ++i) {
    const auto b = static_cast<unsigned char>(s[pos + i]);
    if ((b & 0xC0) != 0x80) return std::nullopt;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return std::nullopt;
  pos += len;
  return cp;
}

std::optional<std::size_t> utf8_find_invalid(std::string_view s) {
  std::size_t pos = 0;
  while (pos < s.size()) {
    // Fast path over ASCII runs.
    if (static_cast<unsigned char>(s[pos]) < 0x80) {
      ++pos;
      continue;
    }
    if (!utf8_decode(s, pos)) return pos;
  }
  return std::nullopt;
}

bool utf8_is_incomplete_prefix(std::string_view s) {
  if (s.empty()) return false;
  const auto b0 = static_cast<unsigned char>(s[0]);
  const std::size_t len = b0 < 0x80             ? 1
                          : (b0 & 0xE0) == 0xC0 ? 2
                          : (b0 & 0xF0) == 0xE0 ? 3
                          : (b0 & 0xF8) == 0xF0 ? 4
                                                : 0;
  if (len < 2 || s.size() >= len) return false;
  if (b0 == 0xC0 || b0 == 0xC1 || b0 > 0xF4) return false;  // overlong 2-byte leads, beyond U+10FFFF
  for (std::size_t i = 1; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b & 0xC0) != 0x80) return false;
  }
  if (s.size() >= 2) {
    // The second byte decides overlong 3/4-byte forms, surrogates and the U+10FFFF ceiling.
    const auto b1 = static_cast<unsigned char>(s[1]);
    if (b0 == 0xE0 && b1 < 0xA0) return false;
    if (b0 == 0xED && b1 > 0x9F) return false;
    if (b0 == 0xF0 && b1 < 0x90) return false;
    if (b0 == 0xF4 && b1 > 0x8F) return false;
  }
  return true;
}

void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

}  // namespace wisp
