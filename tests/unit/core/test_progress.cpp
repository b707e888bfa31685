// The progress line (src/core/progress.h): its text, silence off a terminal, and what it draws on
// a real terminal (a pseudo-terminal opened here).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/progress.h"

namespace wisp {
namespace {

TEST(Progress, LineSaysDoneTotalRateAndTimeLeft) {
  // 3 of 12 windows in 6 s: 25%, 1500 tokens / 6 s = 250 tok/s, 9 left at 2 s each = 18 s.
  EXPECT_EQ(Progress::format("ppl", "windows", 3, 12, 6.0, 1500, "ppl 12.5"),
            "ppl: 3/12 windows (25%), 250.0 tok/s, ETA 0:18, ppl 12.5");
  // 1 of 3 files after 100 s: 2 left at 100 s each = 3:20; no tokens, no rate.
  EXPECT_EQ(Progress::format("bench", "files", 1, 3, 100.0, 0, ""), "bench: 1/3 files (33%), ETA 3:20");
  // An hour and more: h:mm:ss. 1 of 2 in 3723 s leaves 3723 s = 1:02:03.
  EXPECT_EQ(Progress::format("x", "steps", 1, 2, 3723.0, 0, ""), "x: 1/2 steps (50%), ETA 1:02:03");
  // Nothing done yet: no ETA; everything done: none either. Unknown total: the count alone.
  EXPECT_EQ(Progress::format("bench", "files", 0, 3, 0.5, 0, "now a.gguf"), "bench: 0/3 files (0%), now a.gguf");
  EXPECT_EQ(Progress::format("ppl", "windows", 4, 4, 8.0, 800, ""), "ppl: 4/4 windows (100%), 100.0 tok/s");
  EXPECT_EQ(Progress::format("fetch", "files", 2, 0, 1.0, 0, ""), "fetch: 2 files");
}

TEST(Progress, PrintsNothingWhenTheStreamIsNotATerminal) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  {
    Progress p("ppl", "windows", 2, f);
    EXPECT_FALSE(p.enabled());
    p.update(1, 100);
    p.update(2, 200);
    EXPECT_EQ(std::ftell(f), 0L);
    p.print_line("device: cpu");  // other output still comes through
  }
  std::rewind(f);
  char buf[64] = {};
  EXPECT_EQ(std::fread(buf, 1, sizeof buf - 1, f), 12u);
  EXPECT_STREQ(buf, "device: cpu\n");
  std::fclose(f);
}

// Everything readable on the terminal's master side now.
std::string drain(int master) {
  std::string out;
  char buf[4096];
  pollfd pfd{master, POLLIN, 0};
  while (::poll(&pfd, 1, 200) > 0 && (pfd.revents & POLLIN)) {
    const ssize_t n = ::read(master, buf, sizeof buf);
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

TEST(Progress, RedrawsOneLineOnATerminalAndErasesIt) {
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  ASSERT_GE(master, 0);
  ASSERT_EQ(::grantpt(master), 0);
  ASSERT_EQ(::unlockpt(master), 0);
  const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  std::FILE* term = ::fdopen(slave, "w");
  ASSERT_NE(term, nullptr);
  {
    Progress p("ppl", "windows", 2, term);
    EXPECT_TRUE(p.enabled());
    p.update(1, 0, "ppl 9.0");
    const std::string first = drain(master);
    EXPECT_EQ(first.rfind("\r\033[Kppl: 1/2 windows (50%), ETA ", 0), 0u) << first;
    EXPECT_NE(first.find(", ppl 9.0"), std::string::npos) << first;
    EXPECT_EQ(first.find('\n'), std::string::npos) << first;  // redrawn in place, never scrolled
    // Other output goes above the line, which is drawn again after it.
    p.print_line("device: cpu");
    EXPECT_EQ(drain(master), "\r\033[Kdevice: cpu\r\n" + first.substr(4));
    p.update(2);  // the last item is always drawn, however soon after the previous one
    EXPECT_EQ(drain(master), "\r\033[Kppl: 2/2 windows (100%)");
  }
  EXPECT_EQ(drain(master), "\r\033[K");  // erased when done
  std::fclose(term);
  ::close(master);
}

}  // namespace
}  // namespace wisp
