// A small persistent thread pool for the forward pass: parallel_for splits [0, n) into one
// contiguous range per thread (the caller runs the first), and returns when all are done.
//
// Why not OpenMP: libgomp's idle threads spin (active wait) between parallel regions, and a
// forward pass has hundreds of short regions per token. When the machine is oversubscribed (other
// processes, or two runtimes on 2 cores) a spinning thread burns the time slice of the thread that
// has work, and throughput collapses (measured: 2-thread decode 4-8x slower than 1 thread under
// load). Here an idle worker spins only briefly (with pause), then sleeps on a futex
// (std::atomic::wait), and the caller likewise waits for the last range.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace wisp {

class ThreadPool {
 public:
  // n_threads - 1 workers; the calling thread is the n-th. n_threads <= 1 runs everything inline.
  explicit ThreadPool(int n_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) on disjoint ranges covering [0, n), at most one per thread, and waits.
  // Not reentrant: fn must not call parallel_for on the same pool.
  template <class Fn>
  void parallel_for(std::int64_t n, Fn&& fn) {
    if (n <= 0) return;
    if (workers_.empty() || n == 1) {
      fn(std::int64_t{0}, n);
      return;
    }
    using F = std::remove_reference_t<Fn>;
    run(
        n, [](void* ctx, std::int64_t b, std::int64_t e) { (*static_cast<F*>(ctx))(b, e); }, &fn);
  }

 private:
  using Trampoline = void (*)(void* ctx, std::int64_t begin, std::int64_t end);
  void run(std::int64_t n, Trampoline fn, void* ctx);
  void worker(int index);
  void range(int index, std::int64_t& begin, std::int64_t& end) const;

  std::vector<std::thread> workers_;
  // The current job (written by the caller before bumping generation_, read by workers after).
  Trampoline fn_ = nullptr;
  void* ctx_ = nullptr;
  std::int64_t n_ = 0;
  int active_ = 0;  // threads that get a range in this job
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace wisp
