#include "serve/metrics.h"

#include <cstdio>

namespace wisp::serve {

namespace {

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

void series(std::string& out, const char* name, const char* type, const char* help, double value) {
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + num(value) +
         "\n";
}

}  // namespace

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1, 0) {}

void Histogram::observe(double v) {
  std::size_t i = 0;
  while (i < bounds_.size() && v > bounds_[i]) ++i;
  ++counts_[i];
  sum_ += v;
  ++count_;
}

void Histogram::render(std::string& out, const std::string& name, const std::string& help) const {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  std::uint64_t cum = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cum += counts_[i];
    out += name + "_bucket{le=\"" + num(bounds_[i]) + "\"} " + std::to_string(cum) + "\n";
  }
  cum += counts_.back();
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(cum) + "\n";
  out += name + "_sum " + num(sum_) + "\n";
  out += name + "_count " + std::to_string(count_) + "\n";
}

Metrics::Metrics()
    : ttft_({0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}),
      itl_({0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5}) {}

void Metrics::set_scheduler(const SchedulerStats& s, const KvSnapshot& kv) {
  std::lock_guard lock(mu_);
  stats_ = s;
  kv_ = kv;
}

void Metrics::observe_ttft(double seconds) {
  std::lock_guard lock(mu_);
  ttft_.observe(seconds);
}

void Metrics::observe_itl(double seconds) {
  std::lock_guard lock(mu_);
  itl_.observe(seconds);
}

void Metrics::count_response(int status) {
  std::lock_guard lock(mu_);
  ++responses_[status];
}

void Metrics::count_request_finished(FinishReason r) {
  std::lock_guard lock(mu_);
  ++finished_[finish_reason_name(r)];
}

std::string Metrics::render(std::size_t submitted) const {
  std::lock_guard lock(mu_);
  std::string out;
  series(out, "wisp_requests_running", "gauge", "Requests in the running batch.", static_cast<double>(stats_.running));
  const std::size_t waiting = submitted > stats_.running ? submitted - stats_.running : 0;
  series(out, "wisp_requests_waiting", "gauge", "Requests submitted and not running yet (queued for admission).",
         static_cast<double>(waiting));
  const std::size_t used = kv_.blocks_total - kv_.blocks_free - kv_.blocks_cached;
  series(out, "wisp_kv_blocks_total", "gauge", "Blocks in the KV pool.", static_cast<double>(kv_.blocks_total));
  series(out, "wisp_kv_blocks_used", "gauge", "KV blocks held by requests.", static_cast<double>(used));
  series(out, "wisp_kv_blocks_free", "gauge", "KV blocks on the free list.", static_cast<double>(kv_.blocks_free));
  series(out, "wisp_kv_blocks_cached", "gauge", "KV blocks held by no request, kept for the prefix cache.",
         static_cast<double>(kv_.blocks_cached));
  series(out, "wisp_kv_block_size_tokens", "gauge", "Tokens per KV block.", static_cast<double>(kv_.block_size));
  if (kv_.has_draft) {
    series(out, "wisp_draft_kv_blocks_total", "gauge", "Blocks in the draft model's KV pool.",
           static_cast<double>(kv_.draft_blocks_total));
    series(out, "wisp_draft_kv_blocks_used", "gauge", "Draft KV blocks held by drafting requests.",
           static_cast<double>(kv_.draft_blocks_total - kv_.draft_blocks_available));
    series(out, "wisp_draft_steps_total", "counter", "Forward passes of the draft model.",
           static_cast<double>(stats_.draft_steps));
  }
  series(out, "wisp_prefix_cache_queries_total", "counter", "Prompt blocks looked up in the prefix cache.",
         static_cast<double>(stats_.prefix_queries));
  series(out, "wisp_prefix_cache_hits_total", "counter", "Prompt blocks found in the prefix cache.",
         static_cast<double>(stats_.prefix_hits));
  series(out, "wisp_preemptions_total", "counter", "Requests preempted for KV blocks (recomputed later).",
         static_cast<double>(stats_.preemptions));
  series(out, "wisp_prompt_tokens_total", "counter", "Prompt tokens computed (prefix-cache hits excluded).",
         static_cast<double>(stats_.prompt_tokens));
  series(out, "wisp_generation_tokens_total", "counter", "Tokens generated.",
         static_cast<double>(stats_.generated_tokens));
  series(out, "wisp_speculative_drafted_tokens_total", "counter",
         "Speculative guesses (prompt lookup or draft model) verified.", static_cast<double>(stats_.spec_drafted));
  series(out, "wisp_speculative_accepted_tokens_total", "counter", "Speculative guesses kept (equal to the answer).",
         static_cast<double>(stats_.spec_accepted));
  series(out, "wisp_steps_total", "counter", "Forward passes run by the scheduler.", static_cast<double>(stats_.steps));
  out +=
      "# HELP wisp_requests_finished_total Generation requests (choices) finished, by reason.\n"
      "# TYPE wisp_requests_finished_total counter\n";
  for (const char* r : {"stop", "length", "context_full", "cancelled"}) {
    auto it = finished_.find(r);
    out += std::string("wisp_requests_finished_total{reason=\"") + r + "\"} " +
           std::to_string(it == finished_.end() ? 0 : it->second) + "\n";
  }
  out += "# HELP wisp_http_responses_total HTTP answers by status code.\n# TYPE wisp_http_responses_total counter\n";
  for (const auto& [code, n] : responses_) {
    out += "wisp_http_responses_total{code=\"" + std::to_string(code) + "\"} " + std::to_string(n) + "\n";
  }
  ttft_.render(out, "wisp_time_to_first_token_seconds", "Time from a request's arrival to its first generated token.");
  itl_.render(out, "wisp_inter_token_latency_seconds", "Time between consecutive generated tokens of a request.");
  return out;
}

}  // namespace wisp::serve
