// `wisp chat` in a real terminal: tmux runs it in a pseudo-terminal, the test types keys with
// send-keys and reads the screen with capture-pane, as a person at the prompt would see it. Line
// editing (arrow keys, Ctrl-A/E), recall with Up, history kept across sessions in the state
// directory, Ctrl-C at the prompt, and a """ block as one message.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "tests/support/run_command.h"

namespace {

namespace fs = std::filesystem;

std::string smol() {
  std::string p = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!fs::exists(p)) ADD_FAILURE() << p << " is missing: run scripts/fetch_models";
  return p;
}

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
  return n;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// One tmux server of the test's own (its own socket), running one command in a 120x40 window.
class Terminal {
 public:
  explicit Terminal(const std::string& command)
      : socket_("wisp_test_" + std::to_string(::getpid()) + "_" + std::to_string(next_++)) {
    tmux("new-session -d -s t -x 120 -y 40 " + quote(command + "; echo CHAT-EXIT-$?; sleep 60"));
  }
  ~Terminal() { tmux("kill-server"); }
  Terminal(const Terminal&) = delete;
  Terminal& operator=(const Terminal&) = delete;

  // tmux key names (Left, Up, C-a, Enter) and literal text, as send-keys takes them.
  void keys(const std::string& k) { tmux("send-keys -t t " + k); }
  std::string screen() { return wisp::test::run_command("tmux -L " + socket_ + " capture-pane -p -S -200 -t t").out; }
  // Waits until `text` appears `times` times on the screen (bounded); returns whether it did.
  bool wait_for(const std::string& text, std::size_t times = 1, double seconds = 60) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < end) {
      if (count(screen(), text) >= times) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

 private:
  static std::string quote(const std::string& s) {
    std::string q = "'";
    for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
  }
  void tmux(const std::string& args) { wisp::test::run_command("tmux -L " + socket_ + " " + args); }

  static inline int next_ = 0;
  std::string socket_;
};

class ChatTerminal : public ::testing::Test {
 protected:
  void SetUp() override {
    if (wisp::test::run_command("command -v tmux").status != 0) GTEST_SKIP() << "tmux is not installed (scripts/setup)";
    state_ = fs::temp_directory_path() / ("wisp_chat_state_" + std::to_string(::getpid()));
    fs::remove_all(state_);
    fs::create_directories(state_);
  }
  void TearDown() override { fs::remove_all(state_); }

  std::string chat_command(const std::string& extra = "") const {
    return "XDG_STATE_HOME='" + state_.string() + "' '" + std::string(WISP_BINARY) + "' chat -m " + smol() +
           " -t 1 --temp 0 -n 4 " + extra;
  }
  fs::path history() const { return state_ / "wisp" / "chat_history"; }

  fs::path state_;
};

TEST_F(ChatTerminal, ArrowKeysEditUpRecallsAndHistoryOutlivesTheSession) {
  {
    Terminal t(chat_command());
    ASSERT_TRUE(t.wait_for("/help for commands")) << t.screen();
    // Left moves the cursor back over the 'l'; the x goes before it.
    t.keys("/hel Left x Enter");
    ASSERT_TRUE(t.wait_for("unknown command /hexl")) << t.screen();
    // Up brings the line back; Enter sends it again.
    t.keys("Up Enter");
    ASSERT_TRUE(t.wait_for("unknown command /hexl", 2)) << t.screen();
    // Ctrl-A to the start, Ctrl-E to the end.
    t.keys("ello C-a /h C-e Enter");
    ASSERT_TRUE(t.wait_for("unknown command /hello")) << t.screen();
    // Ctrl-C at the prompt drops the line and keeps the chat.
    t.keys("abc C-c");
    ASSERT_TRUE(t.wait_for("(Ctrl-D or /exit to leave)")) << t.screen();
    t.keys("/nope Enter");
    ASSERT_TRUE(t.wait_for("unknown command /nope")) << t.screen();
    t.keys("C-d");
    ASSERT_TRUE(t.wait_for("CHAT-EXIT-0")) << t.screen();
    EXPECT_EQ(count(t.screen(), "^[["), 0u) << t.screen();  // no raw escape sequences echoed
  }
  const std::string saved = slurp(history());
  EXPECT_NE(saved.find("/hexl"), std::string::npos) << saved;
  EXPECT_NE(saved.find("/hello"), std::string::npos) << saved;
  EXPECT_EQ(saved.find("abc"), std::string::npos) << saved;
  EXPECT_EQ(fs::status(history()).permissions() & (fs::perms::group_all | fs::perms::others_all), fs::perms::none);

  // A new session starts with the old one's history: Up recalls its last message.
  Terminal t(chat_command());
  ASSERT_TRUE(t.wait_for("/help for commands")) << t.screen();
  t.keys("Up Enter");
  ASSERT_TRUE(t.wait_for("unknown command /nope")) << t.screen();
  t.keys("/exit Enter");
  ASSERT_TRUE(t.wait_for("CHAT-EXIT-0")) << t.screen();
}

TEST_F(ChatTerminal, ABlockBetweenTripleQuotesIsOneMessage) {
  Terminal t(chat_command());
  ASSERT_TRUE(t.wait_for("/help for commands")) << t.screen();
  t.keys("'\"\"\"' Enter 'line one' Enter Enter 'line three' Enter '\"\"\"' Enter");
  ASSERT_TRUE(t.wait_for("generated at")) << t.screen();  // one answer, to the whole block
  EXPECT_EQ(count(t.screen(), "generated at"), 1u) << t.screen();
  t.keys("C-d");
  ASSERT_TRUE(t.wait_for("CHAT-EXIT-0")) << t.screen();
  // libedit's history file escapes spaces and newlines (\040, \012): one entry, blank line kept.
  const std::string saved = slurp(history());
  EXPECT_NE(saved.find("line\\040one\\012\\012line\\040three"), std::string::npos) << saved;
}

TEST_F(ChatTerminal, NoHistoryKeepsNoFile) {
  Terminal t(chat_command("--no-history"));
  ASSERT_TRUE(t.wait_for("/help for commands")) << t.screen();
  t.keys("/nope Enter");
  ASSERT_TRUE(t.wait_for("unknown command /nope")) << t.screen();
  t.keys("Up Enter");  // within the session, recall still works
  ASSERT_TRUE(t.wait_for("unknown command /nope", 2)) << t.screen();
  t.keys("C-d");
  ASSERT_TRUE(t.wait_for("CHAT-EXIT-0")) << t.screen();
  EXPECT_FALSE(fs::exists(history()));
}

}  // namespace
