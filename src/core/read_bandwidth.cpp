#include "core/read_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "wisp/error.h"

namespace wisp {

namespace {

// Runs body(begin, end) over `threads` equal slices of [0, n) and joins.
template <typename Body>
void for_slices(std::size_t n, int threads, Body&& body) {
  std::vector<std::thread> pool;
  const std::size_t per = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
  for (int t = 0; t < threads; ++t) {
    const std::size_t b = std::min(n, per * static_cast<std::size_t>(t)), e = std::min(n, b + per);
    pool.emplace_back([&body, b, e, t] { body(b, e, t); });
  }
  for (std::thread& th : pool) th.join();
}

}  // namespace

double measure_read_bandwidth(int threads, int runs) {
  threads = std::max(1, threads);
  const std::size_t n = (std::size_t{1} << 30) / sizeof(std::uint64_t);
  std::unique_ptr<std::uint64_t[]> buf(new (std::nothrow) std::uint64_t[n]);
  if (!buf) throw Error("cannot allocate 1 GiB to measure the read bandwidth");
  // Each thread first touches the slice it will read, so pages land on its memory node.
  for_slices(n, threads, [&](std::size_t b, std::size_t e, int) {
    for (std::size_t i = b; i < e; ++i) buf[i] = i;
  });
  std::vector<std::uint64_t> sink(static_cast<std::size_t>(threads));
  double best = 0.0;
  for (int run = 0; run < runs; ++run) {
    const auto t0 = std::chrono::steady_clock::now();
    for_slices(n, threads, [&](std::size_t b, std::size_t e, int t) {
      std::uint64_t acc = 0;
      for (std::size_t i = b; i < e; ++i) acc ^= buf[i];
      sink[static_cast<std::size_t>(t)] = acc;  // keeps the reads from being optimised away
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(n * sizeof(std::uint64_t)) / s);
  }
  return best;
}

}  // namespace wisp
