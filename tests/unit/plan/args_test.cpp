// The shared flag parser (tools/wisp/args.h): spellings, defaults, typed values, generated help
// and the messages for each kind of mistake.
#include <gtest/gtest.h>

#include <stdexcept>

#include "args.h"

namespace wisp::cli {
namespace {

ArgParser demo() {
  ArgParser p("demo", "A demo command.");
  p.option("model").short_name('m').value_name("FILE").help("model file").group("model");
  p.option("ctx", ArgKind::kInt).value_name("S").default_value("4096").help("context");
  p.option("temp", ArgKind::kNumber).help("temperature");
  p.option("name").required().help("a name");
  p.flag("json").help("print JSON");
  return p;
}

std::string usage_message(const ArgParser& p, std::vector<std::string> argv) {
  try {
    p.parse(argv);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Args, SpellingsDefaultsAndTypes) {
  const ArgParser p = demo();
  Args a = p.parse({"-m", "x.gguf", "--name=n1", "--temp", "0.7", "--json"});
  EXPECT_EQ(a.str("model"), "x.gguf");
  EXPECT_EQ(a.str("name"), "n1");
  EXPECT_EQ(a.int64("ctx"), 4096);  // default
  EXPECT_FALSE(a.has("ctx"));
  EXPECT_DOUBLE_EQ(a.number("temp"), 0.7);
  EXPECT_TRUE(a.flag("json"));

  a = p.parse({"--model", "y", "--ctx=8192", "--name", "n"});
  EXPECT_EQ(a.str("model"), "y");
  EXPECT_EQ(a.positive("ctx"), 8192u);
  EXPECT_TRUE(a.has("ctx"));
  EXPECT_FALSE(a.flag("json"));
  EXPECT_FALSE(a.opt_number("temp").has_value());
}

TEST(Args, HelpSkipsRequiredChecksAndListsEveryFlag) {
  const ArgParser p = demo();
  EXPECT_TRUE(p.parse({"--help"}).help_requested());
  EXPECT_TRUE(p.parse({"-h"}).help_requested());
  const std::string h = p.help();
  EXPECT_NE(h.find("usage: wisp demo [options]"), std::string::npos) << h;
  EXPECT_NE(h.find("A demo command."), std::string::npos);
  EXPECT_NE(h.find("-m, --model FILE"), std::string::npos) << h;
  EXPECT_NE(h.find("--ctx S"), std::string::npos);
  EXPECT_NE(h.find("(default 4096)"), std::string::npos);
  EXPECT_NE(h.find("(required)"), std::string::npos);
  EXPECT_NE(h.find("model:\n"), std::string::npos);
  EXPECT_NE(h.find("-h, --help"), std::string::npos);
}

TEST(Args, MistakesNameTheFlag) {
  const ArgParser p = demo();
  EXPECT_EQ(usage_message(p, {"--name", "n", "--ctxx", "5"}),
            "unknown flag '--ctxx' for 'wisp demo' (did you mean --ctx?)");
  EXPECT_EQ(usage_message(p, {"--name", "n", "--frobnicate"}), "unknown flag '--frobnicate' for 'wisp demo'");
  EXPECT_EQ(usage_message(p, {"--name", "n", "-x"}), "unknown flag '-x' for 'wisp demo'");
  EXPECT_EQ(usage_message(p, {"--name", "n", "--ctx"}), "--ctx needs a value (S)");
  EXPECT_EQ(usage_message(p, {"--name", "n", "--ctx", "--json"}), "--ctx needs a value (S)");
  EXPECT_EQ(usage_message(p, {"--name", "n", "--ctx", "4k"}), "--ctx expects an integer, got '4k'");
  EXPECT_EQ(usage_message(p, {"--name", "n", "--temp", "hot"}), "--temp expects a number, got 'hot'");
  EXPECT_EQ(usage_message(p, {"--name", "n", "--ctx", "1", "--ctx", "2"}), "--ctx given twice");
  EXPECT_EQ(usage_message(p, {"--name", "n", "--json=yes"}), "--json takes no value, got 'yes'");
  EXPECT_EQ(usage_message(p, {"--ctx", "1"}), "--name is required");
  EXPECT_EQ(usage_message(p, {"--name", "n", "stray"}), "unexpected argument 'stray' for 'wisp demo'");
}

TEST(Args, NegativeNumbersAreValuesSoRangeChecksCanNameThem) {
  const ArgParser p = demo();
  const Args a = p.parse({"--name", "n", "--ctx", "-5"});
  EXPECT_EQ(a.int64("ctx"), -5);
  try {
    a.positive("ctx");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--ctx must be a positive integer, got -5");
  }
}

TEST(Args, ConvertPrefixesConverterErrorsWithTheFlag) {
  const ArgParser p = demo();
  const Args a = p.parse({"--name", "n", "-m", "bad"});
  try {
    a.convert("model", [](std::string_view s) -> int { throw Error("cannot read '" + std::string(s) + "'"); });
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--model: cannot read 'bad'");
  }
  EXPECT_EQ(*a.convert("model", [](std::string_view s) { return s.size(); }), 3u);
  EXPECT_FALSE(a.convert("temp", [](std::string_view s) { return s.size(); }).has_value());
}

TEST(Args, PositionalsAndDoubleDash) {
  ArgParser p("copy", "Copies.");
  p.positionals("IN OUT", 2, 2);
  p.flag("force").short_name('f');
  const Args a = p.parse({"a", "-f", "--", "-b"});
  ASSERT_EQ(a.positionals().size(), 2u);
  EXPECT_EQ(a.positionals()[1], "-b");
  EXPECT_TRUE(a.flag("force"));
  EXPECT_EQ(usage_message(p, {"a"}), "'wisp copy' needs IN OUT");
}

TEST(Args, DeclarationMistakesAreProgrammingErrors) {
  ArgParser p("x", "X.");
  p.flag("a").short_name('a');
  EXPECT_THROW(p.flag("a"), std::logic_error);
  EXPECT_THROW(p.flag("b").short_name('a'), std::logic_error);
  EXPECT_THROW(p.flag("--c"), std::logic_error);
  const Args a = p.parse(std::vector<std::string>{});
  EXPECT_THROW(a.has("undeclared"), std::logic_error);
}

}  // namespace
}  // namespace wisp::cli
