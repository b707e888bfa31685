// The subcommands' command line (tools/wisp/command_line.h): spellings, typed fields and their
// defaults, generated help, and the message for each kind of mistake.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_line.h"

namespace wisp::cli {
namespace {

struct Demo {
  std::optional<std::string> model;
  std::int64_t ctx = 4096;
  std::optional<double> temp;
  std::string name;
  bool json = false;
  std::optional<int> threads;
  std::size_t last_n = 64;
};

void declare(CommandLine& cl, Demo& d) {
  cl.option("-m,--model", d.model).value_name("FILE").help("model file").group("model");
  cl.positive("--ctx", d.ctx).value_name("S").help("context");
  cl.option("--temp", d.temp).help("temperature");
  cl.option("--name", d.name).required().help("a name");
  cl.flag("--json", d.json).help("print JSON");
  cl.positive("-t,--threads", d.threads).help("threads");
  cl.option("--last-n", d.last_n).help("an unsigned count");
}

std::string usage_message(std::vector<std::string> argv) {
  Demo d;
  CommandLine cl("demo", "A demo command.");
  declare(cl, d);
  try {
    (void)cl.parse(argv);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(CommandLine, SpellingsDefaultsAndTypes) {
  {
    Demo d;
    CommandLine cl("demo", "A demo command.");
    declare(cl, d);
    ASSERT_TRUE(cl.parse({"-m", "x.gguf", "--name=n1", "--temp", "0.7", "--json", "-t4"}));
    EXPECT_EQ(d.model, "x.gguf");
    EXPECT_EQ(d.name, "n1");
    EXPECT_EQ(d.ctx, 4096);  // the field's initial value stands
    EXPECT_FALSE(cl.given("--ctx"));
    ASSERT_TRUE(d.temp.has_value());
    EXPECT_DOUBLE_EQ(*d.temp, 0.7);
    EXPECT_TRUE(d.json);
    EXPECT_EQ(d.threads, 4);
  }
  {
    Demo d;
    CommandLine cl("demo", "A demo command.");
    declare(cl, d);
    ASSERT_TRUE(cl.parse({"--model", "y", "--ctx=8192", "--name", "n"}));
    EXPECT_EQ(d.model, "y");
    EXPECT_EQ(d.ctx, 8192);
    EXPECT_TRUE(cl.given("--ctx"));
    EXPECT_FALSE(d.json);
    EXPECT_FALSE(d.temp.has_value());
    EXPECT_FALSE(d.threads.has_value());
    EXPECT_THROW(cl.given("--undeclared"), std::logic_error);
  }
}

TEST(CommandLine, HelpSkipsRequiredChecksAndListsEveryFlag) {
  Demo d;
  CommandLine cl("demo", "A demo command.");
  declare(cl, d);
  EXPECT_FALSE(cl.parse({"--help"}));
  EXPECT_FALSE(cl.parse({"-h"}));
  const std::string h = cl.help();
  EXPECT_NE(h.find("usage: wisp demo [options]"), std::string::npos) << h;
  EXPECT_NE(h.find("A demo command."), std::string::npos);
  EXPECT_NE(h.find("-m, --model FILE"), std::string::npos) << h;
  EXPECT_NE(h.find("--ctx S"), std::string::npos);
  EXPECT_NE(h.find("context (default 4096)"), std::string::npos) << h;
  EXPECT_NE(h.find("a name (required)"), std::string::npos) << h;
  EXPECT_NE(h.find("model:\n"), std::string::npos);
  EXPECT_NE(h.find("options:\n"), std::string::npos);
  EXPECT_NE(h.find("-h, --help"), std::string::npos);
  EXPECT_EQ(h.find("(default )"), std::string::npos) << h;  // optional fields show no default
  EXPECT_LT(h.find("model:\n"), h.find("options:\n"));      // named groups first
}

TEST(CommandLine, MistakesNameTheFlag) {
  EXPECT_EQ(usage_message({"--name", "n", "--ctxx", "5"}),
            "unknown flag '--ctxx' for 'wisp demo' (did you mean --ctx?)");
  EXPECT_EQ(usage_message({"--name", "n", "--thread=3"}),
            "unknown flag '--thread' for 'wisp demo' (did you mean --threads?)");
  EXPECT_EQ(usage_message({"--name", "n", "--frobnicate"}), "unknown flag '--frobnicate' for 'wisp demo'");
  EXPECT_EQ(usage_message({"--name", "n", "-x"}), "unknown flag '-x' for 'wisp demo'");
  EXPECT_EQ(usage_message({"--name", "n", "--ctx"}), "--ctx needs a value (S)");
  EXPECT_EQ(usage_message({"--name", "n", "--ctx", "--json"}), "--ctx needs a value (S)");
  EXPECT_EQ(usage_message({"--name", "n", "--ctx", "4k"}), "--ctx expects an integer, got '4k'");
  EXPECT_EQ(usage_message({"--name", "n", "--temp", "hot"}), "--temp expects a number, got 'hot'");
  EXPECT_EQ(usage_message({"--name", "n", "--temp", "inf"}), "--temp expects a number, got 'inf'");
  EXPECT_EQ(usage_message({"--name", "n", "--ctx", "1", "--ctx", "2"}), "--ctx given twice");
  EXPECT_EQ(usage_message({"--name", "n", "--json", "--json"}), "--json given twice");
  EXPECT_EQ(usage_message({"--name", "n", "--json=yes"}), "--json takes no value, got 'yes'");
  EXPECT_EQ(usage_message({"--ctx", "1"}), "--name is required");
  EXPECT_EQ(usage_message({"--name", "n", "stray"}), "unexpected argument 'stray' for 'wisp demo'");
  EXPECT_EQ(usage_message({"--name", "n", "-t", "99999999999"}), "--threads is out of range, got '99999999999'");
  EXPECT_EQ(usage_message({"--name", "n", "--ctx", "99999999999999999999"}),
            "--ctx is out of range, got '99999999999999999999'");
}

TEST(CommandLine, NegativeNumbersAreValuesSoRangeChecksCanNameThem) {
  EXPECT_EQ(usage_message({"--name", "n", "--ctx", "-5"}), "--ctx must be a positive integer, got -5");
  EXPECT_EQ(usage_message({"--name", "n", "--ctx=0"}), "--ctx must be a positive integer, got 0");
  EXPECT_EQ(usage_message({"--name", "n", "--temp", "-0.5"}), "(no error)");
  EXPECT_EQ(usage_message({"--name", "n", "--last-n", "-3"}), "--last-n must be 0 or more, got -3");
  EXPECT_EQ(usage_message({"--name", "n", "--last-n", "0"}), "(no error)");
}

TEST(CommandLine, ConvertedPrefixesConverterErrorsWithTheFlag) {
  std::optional<std::size_t> size;
  auto run = [&](std::vector<std::string> argv) -> std::string {
    CommandLine cl("demo", "A demo command.");
    cl.converted("--size", size, [](std::string_view s) -> std::size_t {
      if (s == "bad") throw Error("cannot read '" + std::string(s) + "'");
      return s.size();
    });
    try {
      (void)cl.parse(argv);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(run({"--size", "bad"}), "--size: cannot read 'bad'");
  EXPECT_EQ(run({"--size", "abc"}), "(no error)");
  EXPECT_EQ(size, 3u);
}

TEST(CommandLine, PositionalsAndDoubleDash) {
  std::vector<std::string> files;
  bool force = false;
  auto run = [&](std::vector<std::string> argv) -> std::string {
    files.clear();
    force = false;
    CommandLine cl("copy", "Copies.");
    cl.positionals("IN OUT", files, 2, 2);
    cl.flag("-f,--force", force);
    try {
      (void)cl.parse(argv);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no error)";
  };
  EXPECT_EQ(run({"a", "-f", "--", "-b"}), "(no error)");
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[1], "-b");
  EXPECT_TRUE(force);
  EXPECT_EQ(run({"a"}), "'wisp copy' needs IN OUT");
  EXPECT_EQ(run({"a", "b", "c"}), "unexpected argument 'c' for 'wisp copy'");
  EXPECT_EQ(run({"a", "b", "--forse"}), "unknown flag '--forse' for 'wisp copy' (did you mean --force?)");
}

}  // namespace
}  // namespace wisp::cli
