// escape_for_message: untrusted names reach error messages intact when printable, escaped when not.

#include <gtest/gtest.h>

#include "formats/message_text.h"

namespace wisp {
namespace {

TEST(MessageText, KeepsPrintableAsciiAndUtf8) {
  EXPECT_EQ(escape_for_message("model.layers.0.weight"), "model.layers.0.weight");
  EXPECT_EQ(escape_for_message("gewicht_\xc3\xa4_\xe6\x9d\x83_\xf0\x9f\x98\x80"),
            "gewicht_\xc3\xa4_\xe6\x9d\x83_\xf0\x9f\x98\x80");
  EXPECT_EQ(in_quotes("w"), "'w'");
}

TEST(MessageText, EscapesControlBytesAndBrokenUtf8) {
  EXPECT_EQ(escape_for_message(std::string_view("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(escape_for_message("\x1b[2J"), "\\x1b[2J");              // terminal escape
  EXPECT_EQ(escape_for_message("\xff\xfe"), "\\xff\\xfe");           // never valid
  EXPECT_EQ(escape_for_message("\xc3"), "\\xc3");                    // truncated sequence
  EXPECT_EQ(escape_for_message("\xc0\xaf"), "\\xc0\\xaf");           // overlong '/'
  EXPECT_EQ(escape_for_message("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // UTF-16 surrogate
  EXPECT_EQ(escape_for_message("a\\x00"), "a\\\\x00");               // a literal backslash stays distinct
}

}  // namespace
}  // namespace wisp
