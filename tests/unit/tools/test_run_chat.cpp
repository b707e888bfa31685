// `wisp run` and `wisp chat` driven as a user drives them: through the binary, on the real
// SmolLM2 model, with piped input for the chat.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "formats/gguf_writer.h"
#include "tests/support/run_command.h"

namespace {

namespace fs = std::filesystem;

using Result = wisp::test::CommandResult;

Result run(const std::string& args, const std::string& input = "") { return wisp::test::run_wisp(args, input); }

std::string smol() {
  std::string p = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!fs::exists(p)) ADD_FAILURE() << p << " is missing: run scripts/fetch_models";
  return p;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

TEST(RunCli, GreedyCompletionIsDeterministicAndTimed) {
  std::string args = "run -m " + smol() + " -p 'The capital of France is' -n 12 --temp 0 -t 2";
  Result a = run(args);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_TRUE(contains(a.out, "Paris")) << a.out;
  EXPECT_TRUE(contains(a.err, "tok/s")) << a.err;
  Result b = run(args);
  EXPECT_EQ(a.out, b.out);
}

TEST(RunCli, SeededSamplingRepeats) {
  std::string args = "run -m " + smol() + " -p 'Once upon a time' -n 16 --temp 1.0 --seed 42 -t 2";
  Result a = run(args), b = run(args);
  ASSERT_EQ(a.status, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  EXPECT_FALSE(a.out.empty());
}

TEST(RunCli, BadInputGetsClearMessages) {
  Result empty = run("run -m " + smol() + " -p ''");
  EXPECT_EQ(empty.status, 2);
  EXPECT_TRUE(contains(empty.err, "prompt is empty")) << empty.err;

  Result noprompt = run("run -m " + smol());
  EXPECT_EQ(noprompt.status, 2);
  EXPECT_TRUE(contains(noprompt.err, "no prompt")) << noprompt.err;

  fs::path bad_text = fs::temp_directory_path() / ("wisp_utf8_" + std::to_string(::getpid()) + ".txt");
  { std::ofstream(bad_text, std::ios::binary) << "abc\xff\xfe def"; }
  Result utf8 = run("run -m " + smol() + " -f " + bad_text.string());
  fs::remove(bad_text);
  EXPECT_EQ(utf8.status, 1);
  EXPECT_TRUE(contains(utf8.err, "UTF-8")) << utf8.err;

  std::string long_prompt;
  for (int i = 0; i < 100; ++i) long_prompt += "word ";
  Result too_long = run("run -m " + smol() + " -c 32 -p '" + long_prompt + "'");
  EXPECT_EQ(too_long.status, 1);
  EXPECT_TRUE(contains(too_long.err, "context")) << too_long.err;

  Result missing = run("run -m /no/such/model.gguf -p hi");
  EXPECT_EQ(missing.status, 1);
  EXPECT_TRUE(contains(missing.err, "/no/such/model.gguf")) << missing.err;

  Result badflag = run("run -m " + smol() + " -p hi --temp hot");
  EXPECT_EQ(badflag.status, 2);
  EXPECT_TRUE(contains(badflag.err, "--temp")) << badflag.err;

  // A GGUF of an architecture wisp does not know.
  fs::path f = fs::temp_directory_path() / ("wisp_arch_" + std::to_string(::getpid()) + ".gguf");
  {
    wisp::GgufWriter w;
    w.set_string("general.architecture", "frobnicator");
    std::vector<std::uint8_t> d(4 * 8, 0);
    w.add_tensor("x", 0, {8}, d);
    w.write(f.string());
  }
  Result arch = run("run -m " + f.string() + " -p hi");
  EXPECT_EQ(arch.status, 1);
  EXPECT_TRUE(contains(arch.err, "frobnicator")) << arch.err;
  fs::remove(f);
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

TEST(ChatCli, TwoTurnConversationThroughAPipeUsesTheFirstTurn) {
  Result r =
      run("chat -m " + smol() + " --temp 0 -n 40 -t 2", "My favourite fruit is mango.\nWhat is my favourite fruit?\n");
  ASSERT_EQ(r.status, 0) << r.err;
  // Two answers, one line each, each followed by its stats line on stderr.
  std::size_t stats = 0;
  for (std::size_t p = r.err.find("generated at"); p != std::string::npos; p = r.err.find("generated at", p + 1))
    ++stats;
  EXPECT_EQ(stats, 2u) << r.err;
  std::size_t nl = r.out.find('\n');
  ASSERT_NE(nl, std::string::npos) << r.out;
  std::string second = r.out.substr(nl + 1);
  // The second answer knows what the first turn said...
  EXPECT_TRUE(contains(lower(second), "mango")) << r.out;
  // ...which it cannot know without it: asked alone, the same question gets another fruit.
  Result control = run("chat -m " + smol() + " --temp 0 -n 40 -t 2", "What is my favourite fruit?\n");
  ASSERT_EQ(control.status, 0) << control.err;
  EXPECT_FALSE(contains(lower(control.out), "mango")) << control.out;
  // The second turn reused the first turn's cached tokens instead of re-reading them.
  std::size_t second_stats = r.err.rfind("prompt tokens (");
  ASSERT_NE(second_stats, std::string::npos) << r.err;
  std::string line = r.err.substr(second_stats, r.err.find('\n', second_stats) - second_stats);
  EXPECT_FALSE(contains(line, "(0 reused)")) << line;
}

TEST(ChatCli, CommandsWork) {
  Result r = run("chat -m " + smol() + " --temp 0 -n 8 -t 2", "/help\n/system You are terse.\n/reset\n/bogus\n/exit\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "/reset")) << r.err;
  EXPECT_TRUE(contains(r.err, "system message set")) << r.err;
  EXPECT_TRUE(contains(r.err, "conversation reset")) << r.err;
  EXPECT_TRUE(contains(r.err, "unknown command /bogus")) << r.err;
}

}  // namespace

namespace {

TEST(ChatCli, FullContextDropsTheOldestTurnsAndSaysSo) {
  std::string input;
  for (int i = 0; i < 6; ++i) input += "Tell me one fact about the number " + std::to_string(i + 2) + ".\n";
  Result r = run("chat -m " + smol() + " --temp 0 -n 16 -c 160 -t 2", input);
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "context full: dropped the oldest")) << r.err;
  // Every message still got an answer.
  std::size_t stats = 0;
  for (std::size_t p = r.err.find("generated at"); p != std::string::npos; p = r.err.find("generated at", p + 1))
    ++stats;
  EXPECT_EQ(stats, 6u) << r.err;
}

TEST(ChatCli, AMessageLongerThanTheContextIsRefusedNotFatal) {
  std::string big;
  for (int i = 0; i < 200; ++i) big += "blah ";
  Result r = run("chat -m " + smol() + " --temp 0 -n 8 -c 64 -t 2", big + "\nHi\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(contains(r.err, "error:")) << r.err;
  EXPECT_TRUE(contains(r.err, "-c")) << r.err;
  // The REPL went on and answered the next message.
  EXPECT_TRUE(contains(r.err, "generated at")) << r.err;
}

TEST(ChatCli, CtrlCStopsTheAnswerNotTheProgram) {
  // SIGINT arrives while the first (long) answer is streaming; the REPL must stop that answer and
  // go on to read the next line.
  wisp::test::CommandResult r = wisp::test::run_command(
      "(printf 'Write a very long story about a dragon.\\n'; sleep 6; printf '/help\\n/exit\\n') | "
      "timeout --preserve-status -s INT 3 '" +
      std::string(WISP_BINARY) + "' chat -m " + smol() + " --temp 0 -n 2000 -t 2");
  const std::string& e = r.err;
  EXPECT_EQ(r.status, 0) << e;
  EXPECT_TRUE(contains(e, "stopped by Ctrl-C")) << e;
  EXPECT_TRUE(contains(e, "/reset")) << e;  // the /help after the interrupt was served
}

}  // namespace
