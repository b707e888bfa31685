// The Python building blocks under the interpreter: float and string repr, str methods over UTF-8
// (code points, Unicode whitespace, bytes that are not UTF-8), and json.dumps. Expected values are
// what CPython 3.11 prints; the golden renders cover the same code paths through templates.
#include <gtest/gtest.h>

#include "chat/json_value.h"
#include "chat/py_text.h"
#include "chat/value.h"

namespace wisp::jinja {
namespace {

TEST(ChatPython, FloatRepr) {
  const std::pair<double, const char*> cases[] = {
      {1.0, "1.0"},
      {0.1, "0.1"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {123456789012345.6, "123456789012345.6"},
      {1e-4, "0.0001"},
      {1e-5, "1e-05"},
      {0.00012345, "0.00012345"},
      {2.5e-300, "2.5e-300"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {5e-324, "5e-324"},
      {-0.0, "-0.0"},
      {3.141592653589793, "3.141592653589793"},
      {100.0, "100.0"},
      {1e22, "1e+22"},
      {0.1 + 0.2, "0.30000000000000004"},
      {1234567890123456789.0, "1.2345678901234568e+18"},
      {9999999999999998.0, "9999999999999998.0"},
      {-2.5, "-2.5"},
  };
  for (const auto& [value, text] : cases) EXPECT_EQ(float_repr(value), text) << value;
  EXPECT_EQ(float_repr(1.0 / 0.0), "inf");
  EXPECT_EQ(float_repr(-1.0 / 0.0), "-inf");
}

TEST(ChatPython, StringRepr) {
  EXPECT_EQ(string_repr("plain"), "'plain'");
  EXPECT_EQ(string_repr("it's"), "\"it's\"");
  EXPECT_EQ(string_repr("say \"hi\""), "'say \"hi\"'");
  EXPECT_EQ(string_repr("both ' and \""), "'both \\' and \"'");
  EXPECT_EQ(string_repr("nl\n tab\t cr\r bs\\"), "'nl\\n tab\\t cr\\r bs\\\\'");
  EXPECT_EQ(string_repr(std::string("\x00\x1f\x7f", 3) + "\u0085\u00a0\u00ad"), "'\\x00\\x1f\\x7f\\x85\\xa0\\xad'");
  EXPECT_EQ(string_repr("é 世界 🌍"), "'é 世界 🌍'");
  EXPECT_EQ(string_repr("\u2028\u200b\ufeff😀"), "'\\u2028\\u200b\\ufeff😀'");
}

TEST(ChatPython, CodePointsAndInvalidUtf8) {
  EXPECT_EQ(text::length("héllo 世界 🌍"), 10u);
  const std::string broken = "a\xff\xc3(b\xe2\x82";       // stray, truncated and unterminated sequences
  EXPECT_EQ(text::encode(text::decode(broken)), broken);  // bytes survive a round trip
  EXPECT_EQ(text::length(broken), 7u);
  EXPECT_EQ(text::upper(broken), "A\xff\xc3(B\xe2\x82");
  EXPECT_EQ(text::strip("\u3000\u00a0 x \t\n\u2009", true, true), "x");
  EXPECT_EQ(text::strip("xxhixx", true, false, std::string_view("x")), "hixx");
  EXPECT_EQ(text::upper("straße ÿ é"), "STRASSE Ÿ É");
  EXPECT_EQ(text::lower("ÀÉÎ ΑΒΓ ДОМ"), "àéî αβγ дом");
  EXPECT_EQ(text::title("hello wORLD o'neil"), "Hello World O'Neil");
  EXPECT_EQ(text::capitalize("hELLO World"), "Hello world");
}

TEST(ChatPython, SplitAndReplace) {
  using V = std::vector<std::string>;
  EXPECT_EQ(text::split("a,b,,c", std::string_view(","), -1), (V{"a", "b", "", "c"}));
  EXPECT_EQ(text::split("  a  b \n c ", std::nullopt, -1), (V{"a", "b", "c"}));
  EXPECT_EQ(text::split("  a  b  c ", std::nullopt, 1), (V{"a", "b  c"}));
  EXPECT_EQ(text::rsplit("  a  b  c ", std::nullopt, 1), (V{"a  b", "c"}));
  EXPECT_EQ(text::rsplit("a,b,c", std::string_view(","), 1), (V{"a,b", "c"}));
  EXPECT_EQ(text::split("", std::nullopt, -1), V{});
  EXPECT_EQ(text::split("", std::string_view(","), -1), V{""});
  EXPECT_THROW(text::split("a", std::string_view(""), -1), std::invalid_argument);
  EXPECT_EQ(text::replace("aaa", "a", "b", 2), "bba");
  EXPECT_EQ(text::replace("héllo", "", "-"), "-h-é-l-l-o-");
}

TEST(ChatPython, JsonDumps) {
  const Value v = from_json(nlohmann::ordered_json::parse(
      R"({"b": [1, 2.5, 1e16, null, true, "é\n\u0001\"\\"], "a": {}, "c": [], "d": {"x": -0.0}})"));
  JsonDumpOptions compact;
  EXPECT_EQ(
      json_dumps(v, compact),
      "{\"b\": [1, 2.5, 1e+16, null, true, \"é\\n\\u0001\\\"\\\\\"], \"a\": {}, \"c\": [], \"d\": {\"x\": -0.0}}");
  JsonDumpOptions indented;
  indented.indent = "  ";
  indented.sort_keys = true;
  EXPECT_EQ(json_dumps(v, indented),
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    2.5,\n    1e+16,\n    null,\n    true,\n"
            "    \"é\\n\\u0001\\\"\\\\\"\n  ],\n  \"c\": [],\n  \"d\": {\n    \"x\": -0.0\n  }\n}");
  JsonDumpOptions ascii;
  ascii.ensure_ascii = true;
  EXPECT_EQ(json_dumps(Value("é🌍"), ascii), "\"\\u00e9\\ud83c\\udf0d\"");
  EXPECT_THROW(json_dumps(Value(), compact), std::exception);
}

TEST(ChatPython, Equality) {
  EXPECT_TRUE(Value(1) == Value(1.0));
  EXPECT_TRUE(Value(true) == Value(1));
  EXPECT_FALSE(Value("1") == Value(1));
  EXPECT_FALSE(Value::tuple({Value(1)}) == Value(ValueList{Value(1)}));
  EXPECT_TRUE(Value(nullptr) == Value(nullptr));
  EXPECT_FALSE(Value(nullptr) == Value());
  EXPECT_EQ(Value::tuple({Value(1)}).repr(), "(1,)");
  EXPECT_EQ(Value::tuple({}).repr(), "()");
}

}  // namespace
}  // namespace wisp::jinja
