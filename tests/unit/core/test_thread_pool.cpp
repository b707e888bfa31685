// ThreadPool: every index in [0, n) is visited exactly once per call, for any pool size and n
// (more threads than items included), over many back-to-back jobs (the generation handshake).
#include "core/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace wisp {
namespace {

TEST(ThreadPool, CoversEveryIndexOnceForAnySizeAndThreadCount) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (std::int64_t n : {0, 1, 2, 3, 4, 7, 100, 1001}) {
      std::vector<std::atomic<int>> hits(static_cast<std::size_t>(n));
      pool.parallel_for(n, [&](std::int64_t b, std::int64_t e) {
        for (std::int64_t i = b; i < e; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
      });
      for (std::int64_t i = 0; i < n; ++i)
        EXPECT_EQ(hits[static_cast<std::size_t>(i)].load(), 1) << threads << " " << n;
    }
  }
}

TEST(ThreadPool, ManyShortJobsInARow) {
  ThreadPool pool(3);
  std::atomic<std::int64_t> sum{0};
  for (int job = 0; job < 2000; ++job) {
    pool.parallel_for(3, [&](std::int64_t b, std::int64_t e) { sum.fetch_add(e - b); });
  }
  EXPECT_EQ(sum.load(), 6000);
}

}  // namespace
}  // namespace wisp
