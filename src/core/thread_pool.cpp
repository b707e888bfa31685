#include "core/thread_pool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define WISP_CPU_RELAX() _mm_pause()
#else
#define WISP_CPU_RELAX() std::this_thread::yield()
#endif

namespace wisp {

namespace {

// Polls before sleeping: a short pause loop catches the next op of a token (microseconds apart)
// on an idle machine; then yields, which on a busy machine hands the core to whichever thread has
// work (often our own caller) instead of burning the time slice; then a futex sleep.
constexpr int kSpins = 200;
constexpr int kYields = 64;

template <class Pred>
void poll(const Pred& done) {
  for (int i = 0; i < kSpins && !done(); ++i) WISP_CPU_RELAX();
  for (int i = 0; i < kYields && !done(); ++i) std::this_thread::yield();
}

template <class Pred, class T>
void spin_then_wait(const Pred& done, const std::atomic<T>& word, T old) {
  poll(done);
  while (!done()) word.wait(old, std::memory_order_acquire);
}

}  // namespace

ThreadPool::ThreadPool(int n_threads) {
  for (int i = 1; i < n_threads; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::range(int index, std::int64_t& begin, std::int64_t& end) const {
  begin = n_ * index / active_;
  end = n_ * (index + 1) / active_;
}

void ThreadPool::run(std::int64_t n, Trampoline fn, void* ctx) {
  fn_ = fn;
  ctx_ = ctx;
  n_ = n;
  active_ = static_cast<int>(std::min<std::int64_t>(n, size()));
  // Every worker acknowledges every job, even one without a range: the next job's fields are then
  // never written while a worker may still read this one's.
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_acq_rel);  // publishes the job
  generation_.notify_all();
  std::int64_t b, e;
  range(0, b, e);
  fn(ctx, b, e);
  poll([&] { return pending_.load(std::memory_order_acquire) == 0; });
  for (int p; (p = pending_.load(std::memory_order_acquire)) != 0;) pending_.wait(p, std::memory_order_acquire);
}

void ThreadPool::worker(int index) {
  std::uint64_t seen = 0;
  for (;;) {
    spin_then_wait([&] { return generation_.load(std::memory_order_acquire) != seen; }, generation_, seen);
    seen = generation_.load(std::memory_order_acquire);
    if (stop_.load(std::memory_order_acquire)) return;
    if (index < active_) {
      std::int64_t b, e;
      range(index, b, e);
      fn_(ctx_, b, e);
    }
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

}  // namespace wisp
