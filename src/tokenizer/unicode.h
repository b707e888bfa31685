// Unicode facts the tokenizer needs: UTF-8 decoding/encoding/validation and the major general
// category of a code point (\p{L}, \p{N}, ...) plus the White_Space property (\s).
// The category table is generated (src/tokenizer/unicode_data.cpp, scripts/gen_unicode_tables.py)
// at the Unicode version llama.cpp uses, so text splits exactly as it does there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace wisp {

enum class UnicodeClass : std::uint8_t {
  kUnassigned,   // Cn
  kLetter,       // L*
  kNumber,       // N*
  kMark,         // M*
  kPunctuation,  // P*
  kSymbol,       // S*
  kSeparator,    // Z*
  kControl,      // Cc, Cf, Co, Cs
};

namespace unicode_detail {
struct ClassRange {
  char32_t first;  // the range runs to the next entry's first - 1
  UnicodeClass cls;
};
extern const char kUnicodeVersion[];
extern const ClassRange kClassRanges[];
extern const std::size_t kClassRangeCount;
extern const char32_t kWhiteSpace[];
extern const std::size_t kWhiteSpaceCount;
}  // namespace unicode_detail

// The Unicode version of the generated table ("15.1.0").
const char* unicode_table_version();

UnicodeClass unicode_class(char32_t cp);
bool unicode_is_whitespace(char32_t cp);  // the White_Space property (regex \s)
inline bool unicode_is_letter(char32_t cp) { return unicode_class(cp) == UnicodeClass::kLetter; }
inline bool unicode_is_number(char32_t cp) { return unicode_class(cp) == UnicodeClass::kNumber; }

// Byte length of the UTF-8 sequence a lead byte announces (1 for ASCII and for stray
// continuation bytes, as llama.cpp counts them).
inline std::size_t utf8_sequence_length(unsigned char lead) {
  static constexpr std::uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

// Decodes one well-formed code point at `pos` and advances `pos`; std::nullopt (pos unchanged)
// for malformed input: truncation, bad continuation bytes, overlong forms, surrogates, > U+10FFFF.
std::optional<char32_t> utf8_decode(std::string_view s, std::size_t& pos);

// Byte offset of the first malformed sequence in `s`, or std::nullopt when `s` is valid UTF-8.
std::optional<std::size_t> utf8_find_invalid(std::string_view s);

// True when `s` is a non-empty proper prefix of some well-formed UTF-8 sequence, i.e. more bytes
// could still complete it ("\xE2\x82" can become "€"; "\xC0" or "\xE2A" never can).
bool utf8_is_incomplete_prefix(std::string_view s);

void utf8_append(std::string& out, char32_t cp);

}  // namespace wisp
