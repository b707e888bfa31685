#include "line_reader.h"

#include <fcntl.h>
#include <histedit.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace wisp::cli {

namespace {

constexpr int kHistorySize = 1000;
constexpr const char* kPrompt = "> ";
constexpr const char* kContinuation = "... ";

bool is_block_fence(const std::string& line) { return line == "\"\"\""; }

}  // namespace

std::string LineReader::default_history_path() {
  if (const char* state = std::getenv("XDG_STATE_HOME"); state != nullptr && *state != '\0') {
    return std::string(state) + "/wisp/chat_history";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return std::string(home) + "/.local/state/wisp/chat_history";
  }
  return {};
}

LineReader::LineReader(bool interactive, std::string history_path, std::atomic<bool>& interrupted)
    : interactive_(interactive),
      show_prompt_(interactive),
      history_path_(std::move(history_path)),
      interrupted_(interrupted) {
  if (!interactive_) return;
  el_ = el_init("wisp", stdin, stdout, stderr);
  if (el_ == nullptr) {  // no usable terminal description: fall back to plain reads
    interactive_ = false;
    return;
  }
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_PROMPT, &LineReader::prompt_of);
  el_set(el_, EL_EDITOR, "emacs");
  // The chat's own SIGINT handler stays in place (no EL_SIGNAL): Ctrl-C at the prompt interrupts
  // the read, which returns kInterrupted, and the line is dropped.
  el_set(el_, EL_SIGNAL, 0);
  hist_ = history_init();
  HistEvent ev;
  history(hist_, &ev, H_SETSIZE, kHistorySize);
  history(hist_, &ev, H_SETUNIQUE, 1);
  el_set(el_, EL_HIST, history, hist_);
  el_source(el_, nullptr);  // the user's ~/.editrc, if any
  if (!history_path_.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(history_path_).parent_path(), ec);
    // Created private: the history holds what was typed to the model.
    const int fd = ::open(history_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
    if (fd >= 0) ::close(fd);
    if (ec || fd < 0) {
      std::fprintf(stderr, "chat: cannot keep history in %s; history lasts this session only\n", history_path_.c_str());
      history_path_.clear();
    } else {
      history(hist_, &ev, H_LOAD, history_path_.c_str());
    }
  }
}

LineReader::~LineReader() {
  if (hist_ != nullptr) history_end(hist_);
  if (el_ != nullptr) el_end(el_);
}

char* LineReader::prompt_of(editline* el) {
  void* self = nullptr;
  el_get(el, EL_CLIENTDATA, &self);
  return const_cast<char*>(static_cast<LineReader*>(self)->prompt_);
}

ReadStatus LineReader::read_line(std::string& line, const char* prompt) {
  line.clear();
  if (interactive_) {
    prompt_ = prompt;
    int count = 0;
    errno = 0;
    const char* s = el_gets(el_, &count);
    if (s == nullptr || count < 0) {
      if (interrupted_.exchange(false) || errno == EINTR) return ReadStatus::kInterrupted;
      return ReadStatus::kEof;
    }
    line.assign(s, static_cast<std::size_t>(count));
  } else {
    if (show_prompt_) {
      std::fputs(prompt, stdout);
      std::fflush(stdout);
    }
    char* buf = nullptr;
    std::size_t cap = 0;
    errno = 0;
    const ssize_t n = ::getline(&buf, &cap, stdin);
    if (n > 0) line.assign(buf, static_cast<std::size_t>(n));
    std::free(buf);
    if (n < 0) {
      if (interrupted_.exchange(false) || errno == EINTR) {
        std::clearerr(stdin);
        return ReadStatus::kInterrupted;
      }
      return ReadStatus::kEof;
    }
  }
  if (!line.empty() && line.back() == '\n') line.pop_back();
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return ReadStatus::kLine;
}

ReadStatus LineReader::read_message(std::string& out) {
  out.clear();
  std::string line;
  ReadStatus rs = read_line(line, kPrompt);
  if (rs != ReadStatus::kLine) return rs;
  if (is_block_fence(line)) {
    // A block: every line up to the closing fence, blank lines kept.
    bool first = true;
    for (;;) {
      rs = read_line(line, kContinuation);
      if (rs == ReadStatus::kInterrupted) return rs;
      if (rs == ReadStatus::kEof || is_block_fence(line)) break;
      if (!first) out += '\n';
      out += line;
      first = false;
    }
  } else {
    while (!line.empty() && line.back() == '\\') {
      line.pop_back();
      out += line + "\n";
      rs = read_line(line, kContinuation);
      if (rs == ReadStatus::kInterrupted) return rs;
      if (rs == ReadStatus::kEof) {
        line.clear();
        break;
      }
    }
    out += line;
  }
  if (hist_ != nullptr && out.find_first_not_of(" \t\n") != std::string::npos) {
    HistEvent ev;
    history(hist_, &ev, H_ENTER, out.c_str());
    if (!history_path_.empty()) history(hist_, &ev, H_SAVE, history_path_.c_str());
  }
  return ReadStatus::kLine;
}

}  // namespace wisp::cli
