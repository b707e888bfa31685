#include "core/progress.h"

#include <unistd.h>

#include <cmath>

namespace wisp {
namespace {

// "0:42", "12:05", "1:02:03".
std::string clock_text(double seconds) {
  const auto s = static_cast<long long>(std::llround(seconds));
  char buf[32];
  if (s >= 3600) {
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  } else {
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  }
  return buf;
}

}  // namespace

Progress::Progress(std::string what, std::string unit, std::uint64_t total, std::FILE* out)
    : what_(std::move(what)),
      unit_(std::move(unit)),
      total_(total),
      stream_(out),
      out_(out != nullptr && ::isatty(::fileno(out)) ? out : nullptr),
      start_(Clock::now()) {}

Progress::~Progress() { finish(); }

std::string Progress::format(std::string_view what, std::string_view unit, std::uint64_t done, std::uint64_t total,
                             double seconds, std::uint64_t tokens, std::string_view note) {
  std::string line = std::string(what) + ": " + std::to_string(done);
  if (total > 0) line += "/" + std::to_string(total);
  line += " " + std::string(unit);
  char buf[64];
  if (total > 0) {
    std::snprintf(buf, sizeof buf, " (%.0f%%)", 100.0 * static_cast<double>(done) / static_cast<double>(total));
    line += buf;
  }
  if (tokens > 0 && seconds > 0) {
    std::snprintf(buf, sizeof buf, ", %.1f tok/s", static_cast<double>(tokens) / seconds);
    line += buf;
  }
  // The remaining items at the pace so far; none before the first item is done.
  if (total > 0 && done > 0 && done < total) {
    line += ", ETA " + clock_text(seconds / static_cast<double>(done) * static_cast<double>(total - done));
  }
  if (!note.empty()) line += ", " + std::string(note);
  return line;
}

void Progress::update(std::uint64_t done, std::uint64_t tokens, std::string_view note) {
  if (out_ == nullptr) return;
  const Clock::time_point now = Clock::now();
  const bool last = total_ > 0 && done >= total_;
  if (drawn_ && !last && now - last_draw_ < std::chrono::milliseconds(100)) return;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  drawn_line_ = format(what_, unit_, done, total_, seconds, tokens, note);
  // \r to the line's start, ESC[K to erase what a longer earlier line left.
  std::fprintf(out_, "\r\033[K%s", drawn_line_.c_str());
  std::fflush(out_);
  drawn_ = true;
  last_draw_ = now;
}

void Progress::print_line(std::string_view line) {
  if (stream_ == nullptr) return;
  if (out_ != nullptr && drawn_) std::fputs("\r\033[K", out_);
  std::fprintf(stream_, "%.*s\n", static_cast<int>(line.size()), line.data());
  if (out_ != nullptr && drawn_) std::fputs(drawn_line_.c_str(), out_);
  std::fflush(stream_);
}

void Progress::finish() {
  if (out_ == nullptr || !drawn_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace wisp
