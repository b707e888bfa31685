#include "core/read_bandwidth.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "wisp/error.h"

namespace wisp {

namespace {

// 64 bytes as one value: the compiler lowers it to the widest vector registers the build targets
// (one zmm with AVX-512, two ymm with AVX2, four q registers on NEON).
using V64 = std::uint64_t __attribute__((vector_size(64)));

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// 256 bytes at q into acc: four 64-byte loads, independent of each other.
void xor256(const unsigned char* q, V64& acc) {
  V64 v0, v1, v2, v3;
  std::memcpy(&v0, q, 64);
  std::memcpy(&v1, q + 64, 64);
  std::memcpy(&v2, q + 128, 64);
  std::memcpy(&v3, q + 192, 64);
  acc ^= (v0 ^ v1) ^ (v2 ^ v3);
}

// How many places of its slice one reader streams from at once. A single sequential stream per
// core under-measures what the memory system gives: on the 2-core Zen 5 host (idle, two threads,
// a 600 MiB model file's mapped pages) one stream read 44-45 GB/s, two 51, four 51-52, eight 51-52,
// while decoding that file reads ~52 GB/s (its matmuls walk several rows at once). Four.
constexpr std::size_t kStreams = 4;

// XOR of [p, p + bytes), bytes a multiple of 256: the range cut into kStreams parts read in
// lockstep, 256 bytes from each in turn, then the remainder; all bytes are read once.
std::uint64_t stream_xor(const unsigned char* p, std::size_t bytes) {
  const std::size_t part = bytes / kStreams / 256 * 256;
  V64 acc[kStreams] = {};
  for (std::size_t o = 0; o < part; o += 256)
    for (std::size_t s = 0; s < kStreams; ++s) xor256(p + s * part + o, acc[s]);
  for (std::size_t o = kStreams * part; o < bytes; o += 256) xor256(p + o, acc[0]);
  V64 a{};
  for (const V64& x : acc) a ^= x;
  std::uint64_t r = 0;
  for (int i = 0; i < 8; ++i) r ^= a[i];
  return r;
}

// 4x the last-level cache, so no pass finds its bytes left in it by the previous one; 1 GiB when
// the size is unknown, at most 2 GiB.
std::size_t buffer_bytes() {
  long l3 = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
  constexpr std::size_t kGiB = std::size_t{1} << 30;
  const std::size_t want = l3 > 0 ? 4 * static_cast<std::size_t>(l3) : kGiB;
  return std::clamp(want, kGiB, 2 * kGiB) & ~std::size_t{(1 << 20) - 1};
}

}  // namespace

ReadBandwidth measure_read_bandwidth(int threads, int runs) {
  const int hw = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::clamp(threads, 1, hw);
  runs = std::max(1, runs);
  ReadBandwidth out;
  out.buffer_bytes = buffer_bytes();
  out.threads = threads;
  const std::size_t n = out.buffer_bytes;
  std::unique_ptr<unsigned char[]> buf(new (std::nothrow) unsigned char[n]);
  if (!buf) throw Error("cannot allocate " + std::to_string(n >> 20) + " MiB to measure the read bandwidth");
  // Slices in whole 256-byte steps; the last thread takes the remainder.
  const std::size_t per = n / static_cast<std::size_t>(threads) / 256 * 256;
  struct Pass {
    std::chrono::steady_clock::time_point start, end;
    double cpu = 0;
    std::uint64_t sink = 0;  // stored and read back after the join: the reads cannot be dropped
  };
  std::vector<Pass> passes(static_cast<std::size_t>(threads) * static_cast<std::size_t>(runs));
  std::barrier sync(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      unsigned char* p = buf.get() + per * static_cast<std::size_t>(t);
      const std::size_t bytes = t + 1 == threads ? n - per * static_cast<std::size_t>(t) : per;
      std::memset(p, 1, bytes);  // its own slice written first: pages faulted in, on this thread's node
      for (int r = 0; r < runs; ++r) {
        sync.arrive_and_wait();
        Pass& s = passes[static_cast<std::size_t>(r) * static_cast<std::size_t>(threads) + static_cast<std::size_t>(t)];
        s.start = std::chrono::steady_clock::now();
        const double c0 = thread_cpu_seconds();
        s.sink = stream_xor(p, bytes);
        s.cpu = thread_cpu_seconds() - c0;
        s.end = std::chrono::steady_clock::now();
      }
    });
  }
  for (std::thread& th : pool) th.join();
  std::uint64_t sink = 0;
  for (int r = 0; r < runs; ++r) {
    double cpu_rate = 0;
    auto start = std::chrono::steady_clock::time_point::max();
    auto end = std::chrono::steady_clock::time_point::min();
    for (int t = 0; t < threads; ++t) {
      const Pass& s =
          passes[static_cast<std::size_t>(r) * static_cast<std::size_t>(threads) + static_cast<std::size_t>(t)];
      const std::size_t bytes = t + 1 == threads ? n - per * static_cast<std::size_t>(t) : per;
      cpu_rate += static_cast<double>(bytes) / std::max(s.cpu, 1e-9);
      start = std::min(start, s.start);
      end = std::max(end, s.end);
      sink ^= s.sink;
    }
    const double wall = std::chrono::duration<double>(end - start).count();
    out.bytes_per_s = std::max(out.bytes_per_s, cpu_rate);
    out.wall_bytes_per_s = std::max(out.wall_bytes_per_s, static_cast<double>(n) / std::max(wall, 1e-9));
  }
  out.checksum = sink;
  return out;
}

}  // namespace wisp
