// What GET /metrics reports, in Prometheus' text format (version 0.0.4): the scheduler's gauges and
// counters, the KV pool's blocks, HTTP answers by status, and histograms of time to first token
// and inter-token latency. Thread-safe: the scheduler thread records, any thread renders.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/scheduler.h"

namespace wisp::serve {

// A cumulative histogram with fixed upper bounds (seconds).
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double v);
  // The series of one histogram: name_bucket{le=...}, name_sum, name_count.
  void render(std::string& out, const std::string& name, const std::string& help) const;

 private:
  std::vector<double> bounds_;
  std::vector<std::uint64_t> counts_;  // per bucket (not cumulative); last is +Inf
  double sum_ = 0;
  std::uint64_t count_ = 0;
};

struct KvSnapshot {
  std::size_t blocks_total = 0;
  std::size_t blocks_free = 0;
  std::size_t blocks_cached = 0;  // held by no request, kept for the prefix cache
  std::size_t block_size = 0;
  // The draft model's own pool (--draft), whose blocks only drafting requests hold.
  bool has_draft = false;
  std::size_t draft_blocks_total = 0;
  std::size_t draft_blocks_available = 0;
};

class Metrics {
 public:
  Metrics();
  void set_scheduler(const SchedulerStats& s, const KvSnapshot& kv);
  void observe_ttft(double seconds);
  void observe_itl(double seconds);
  void count_response(int status);
  void count_request_finished(FinishReason r);
  // `submitted`: requests submitted and not finished (exact at any moment, unlike the scheduler's
  // snapshot, which is refreshed after each step): waiting = submitted - running.
  std::string render(std::size_t submitted) const;

 private:
  mutable std::mutex mu_;
  SchedulerStats stats_;
  KvSnapshot kv_;
  Histogram ttft_;
  Histogram itl_;
  std::map<int, std::uint64_t> responses_;
  std::map<std::string, std::uint64_t> finished_;
};

}  // namespace wisp::serve
