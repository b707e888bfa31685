// The generated category table and the UTF-8 helpers the pre-tokenizers stand on.
#include <gtest/gtest.h>

#include <algorithm>

#include "tokenizer/unicode.h"

namespace wisp {
namespace {

UnicodeClass table_class(char32_t cp) {
  using unicode_detail::kClassRangeCount;
  using unicode_detail::kClassRanges;
  const auto* it = std::upper_bound(kClassRanges, kClassRanges + kClassRangeCount, cp,
                                    [](char32_t c, const unicode_detail::ClassRange& r) { return c < r.first; });
  return (it - 1)->cls;
}

TEST(UnicodeTable, IsTheVersionLlamaCppUses) { EXPECT_STREQ(unicode_table_version(), "15.1.0"); }

TEST(UnicodeTable, AsciiFastPathAgreesWithTheTable) {
  for (char32_t c = 0; c < 0x80; ++c)
    EXPECT_EQ(unicode_class(c), table_class(c)) << "U+" << std::hex << static_cast<std::uint32_t>(c);
}

TEST(UnicodeTable, KnownCategories) {
  EXPECT_EQ(unicode_class(U'é'), UnicodeClass::kLetter);
  EXPECT_EQ(unicode_class(U'中'), UnicodeClass::kLetter);
  EXPECT_EQ(unicode_class(U'ß'), UnicodeClass::kLetter);
  EXPECT_EQ(unicode_class(0x0663), UnicodeClass::kNumber);  // ARABIC-INDIC DIGIT THREE
  EXPECT_EQ(unicode_class(U'²'), UnicodeClass::kNumber);
  EXPECT_EQ(unicode_class(0x2167), UnicodeClass::kNumber);  // ROMAN NUMERAL EIGHT (Nl)
  EXPECT_EQ(unicode_class(0x0301), UnicodeClass::kMark);
  EXPECT_EQ(unicode_class(U'€'), UnicodeClass::kSymbol);
  EXPECT_EQ(unicode_class(0x1F600), UnicodeClass::kSymbol);
  EXPECT_EQ(unicode_class(0x2014), UnicodeClass::kPunctuation);  // EM DASH
  EXPECT_EQ(unicode_class(0x3000), UnicodeClass::kSeparator);
  EXPECT_EQ(unicode_class(0x200B), UnicodeClass::kControl);  // ZERO WIDTH SPACE is Cf
  EXPECT_EQ(unicode_class(0xE000), UnicodeClass::kControl);  // private use
  EXPECT_EQ(unicode_class(0x0378), UnicodeClass::kUnassigned);
  EXPECT_EQ(unicode_class(0x2EBF0), UnicodeClass::kLetter);     // CJK Extension I: new in Unicode 15.1
  EXPECT_EQ(unicode_class(0x0897), UnicodeClass::kUnassigned);  // assigned only in Unicode 16
  EXPECT_EQ(unicode_class(0x110000), UnicodeClass::kUnassigned);
}

TEST(UnicodeTable, WhiteSpaceProperty) {
  for (char32_t c :
       {U'\t', U'\n', U'\v', U'\f', U'\r', U' ', char32_t{0x85}, char32_t{0xA0}, char32_t{0x1680}, char32_t{0x2000},
        char32_t{0x200A}, char32_t{0x2028}, char32_t{0x2029}, char32_t{0x202F}, char32_t{0x205F}, char32_t{0x3000}})
    EXPECT_TRUE(unicode_is_whitespace(c)) << "U+" << std::hex << static_cast<std::uint32_t>(c);
  for (char32_t c : {U'a', U'_', char32_t{0x1C}, char32_t{0x200B}, char32_t{0x180E}, char32_t{0xFEFF}})
    EXPECT_FALSE(unicode_is_whitespace(c)) << "U+" << std::hex << static_cast<std::uint32_t>(c);
}

TEST(Utf8, DecodesWellFormedSequences) {
  const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\xF4\x8F\xBF\xBF";
  std::size_t pos = 0;
  EXPECT_EQ(utf8_decode(s, pos), U'a');
  EXPECT_EQ(utf8_decode(s, pos), U'é');
  EXPECT_EQ(utf8_decode(s, pos), U'€');
  EXPECT_EQ(utf8_decode(s, pos), char32_t{0x1F600});
  EXPECT_EQ(utf8_decode(s, pos), char32_t{0x10FFFF});
  EXPECT_EQ(pos, s.size());
  EXPECT_EQ(utf8_decode(s, pos), std::nullopt);
}

TEST(Utf8, RejectsMalformedSequences) {
  for (std::string bad :
       {"\x80", "\xBF", "\xC0\x80", "\xC1\xBF", "\xE0\x80\x80", "\xED\xA0\x80", "\xF0\x80\x80\x80", "\xF4\x90\x80\x80",
        "\xF8\x88\x80\x80\x80", "\xFF", "\xC3", "\xE2\x82", "\xC3(", "\xE2\x28\xA1"}) {
    std::size_t pos = 0;
    EXPECT_EQ(utf8_decode(bad, pos), std::nullopt) << testing::PrintToString(bad);
    EXPECT_EQ(pos, 0u);
  }
  EXPECT_EQ(utf8_find_invalid("ok \xE2\x82\xAC and \xC3("), std::optional<std::size_t>(11));
  EXPECT_EQ(utf8_find_invalid("all fine \xF0\x9F\x98\x80"), std::nullopt);
}

TEST(Utf8, IncompletePrefixes) {
  for (std::string p : {"\xC3", "\xE2", "\xE2\x82", "\xF0", "\xF0\x9F", "\xF0\x9F\x98", "\xF4\x8F"})
    EXPECT_TRUE(utf8_is_incomplete_prefix(p)) << testing::PrintToString(p);
  for (std::string p : {"", "a", "\xC3\xA9", "\x80", "\xC0", "\xC1", "\xF5",
                        "\xE2"
                        "A",
                        "\xE0\x80", "\xED\xA0", "\xF0\x80", "\xF4\x90"})
    EXPECT_FALSE(utf8_is_incomplete_prefix(p)) << testing::PrintToString(p);
}

TEST(Utf8, EncodesEveryLength) {
  std::string s;
  for (char32_t c : {U'a', U'é', U'€', char32_t{0x1F600}}) utf8_append(s, c);
  EXPECT_EQ(s, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

}  // namespace
}  // namespace wisp
