// The chat's input: one message at a time, from a terminal through libedit (cursor keys, Ctrl-A/E
// and the other emacs bindings, history recalled with Up and kept in a file across sessions) or,
// when stdin is not a terminal, with plain reads (scripted conversations through a pipe).
//
// A message is one line; a line ending in '\' continues on the next one; a line holding only
// """ starts a block that runs to the next such line (for pasting text with blank lines).
#pragma once

#include <atomic>
#include <string>

struct editline;
struct history;

namespace wisp::cli {

enum class ReadStatus { kLine, kEof, kInterrupted };

class LineReader {
 public:
  // `interactive`: read through libedit (stdin is a terminal). `history_path`: the file history is
  // loaded from and saved to after every message (empty: none). `interrupted`: the flag a SIGINT
  // handler raises; a read it interrupts returns kInterrupted (and the flag is cleared).
  LineReader(bool interactive, std::string history_path, std::atomic<bool>& interrupted);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  ReadStatus read_message(std::string& out);

  // Where the chat keeps its history by default: $XDG_STATE_HOME/wisp/chat_history, else
  // $HOME/.local/state/wisp/chat_history; empty when neither variable is set.
  static std::string default_history_path();

 private:
  ReadStatus read_line(std::string& line, const char* prompt);
  static char* prompt_of(editline* el);

  bool interactive_;
  bool show_prompt_;  // a terminal: prompts are printed even when libedit could not start
  std::string history_path_;
  std::atomic<bool>& interrupted_;
  const char* prompt_ = "";
  editline* el_ = nullptr;
  history* hist_ = nullptr;
};

}  // namespace wisp::cli
