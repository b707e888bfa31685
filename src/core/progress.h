// A one-line progress report for a long operation (perplexity windows, benchmark files, a weight
// upload), redrawn in place on a terminal: "ppl: 3/12 windows (25%), 410 tok/s, ETA 0:42".
// It prints only when its stream is a terminal, so logs, pipes and tests see nothing of it, and
// it erases itself when done, so what the command prints next starts on a clean line.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace wisp {

class Progress {
 public:
  // `what` names the work ("ppl"), `unit` its items ("windows"); `total` items (0: unknown).
  // Draws on `out` only if it is a terminal (isatty).
  Progress(std::string what, std::string unit, std::uint64_t total, std::FILE* out = stderr);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return out_ != nullptr; }

  // `done` items are finished and `tokens` tokens processed so far (for tok/s; 0 shows none);
  // `note` is appended ("sm2.Q4_0.gguf"). Redraws at most ten times a second, and always for the
  // last item.
  void update(std::uint64_t done, std::uint64_t tokens = 0, std::string_view note = {});
  // Erases the line (the destructor does it too).
  void finish();
  // Prints `line` and a newline on the stream, above the progress: the progress line is erased,
  // the text printed and the progress drawn again. Off a terminal, just the line.
  void print_line(std::string_view line);

  // The line as update() would draw it, without the redraw control characters (for tests).
  static std::string format(std::string_view what, std::string_view unit, std::uint64_t done, std::uint64_t total,
                            double seconds, std::uint64_t tokens, std::string_view note);

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_, unit_;
  std::uint64_t total_;
  std::FILE* stream_;
  std::FILE* out_;  // stream_ when it is a terminal, else null
  std::string drawn_line_;
  Clock::time_point start_, last_draw_{};
  bool drawn_ = false;
};

}  // namespace wisp
