// Continuous batching over one Engine: requests join and leave at every step; each step is one
// forward pass filled, within a token budget, by the running decodes first and then by chunks of
// prompts (chunked prefill), so a long prompt never holds up the others' decodes for more than one
// chunk. No HTTP here: the server (and tests, benchmarks) submit requests and receive events.
//
// Policies (see docs/engine.md):
// - Budget: at most step_tokens tokens per step; every running request whose known tokens are all
//   in its cache but the last (a decode) gets its one token first, in admission order; what is left
//   goes to prompt chunks, oldest request first, then to admitting waiting requests.
// - Admission: first come, first served (no request overtakes the head of the queue, so a
//   preempted request resumes first); the head is admitted while fewer than max_running run, budget
//   is left, and the pool's available blocks (free + cached-but-unheld) cover every block its
//   prompt still needs after its cached prefix, on top of the blocks the running requests' prompts
//   still need.
// - Preemption: when a decode cannot get a block, the newest running request is preempted: its
//   blocks are released (full blocks stay in the prefix cache), it goes back to the front of the
//   queue and is recomputed when readmitted (its generated tokens become part of its prompt). A
//   request alone in a pool too small for its next token finishes with kContextFull.
// - Prefix caching: every full block of known tokens is published under the hash chain of its
//   tokens; a new request attaches the leading cached blocks of its prompt and computes only the
//   rest (at least its last token).
// - Speculation (prompt lookup, RequestParams::lookup): in a step with at most
//   speculate_max_decodes decodes, after every other entry has its tokens, a decoding request that
//   asked for it appends up to k guesses from its own text (sample/
//   ngram_lookup.h) to its one token, as far as the step's leftover budget and free blocks allow
//   (guesses never preempt anyone and never take a prompt chunk's place). The step returns a logits
//   row per guess; each row is sampled in order exactly as a plain decode would sample it, a guess
//   is kept while it equals the token sampled before it, and the cache is cut back to the kept
//   ones. With the default batch-invariant numerics the tokens are therefore the plain decode's,
//   greedy or seeded; k adapts to the request's recent acceptance.
// - Speculation with a draft model (SchedulerOptions::draft, RequestParams::draft): in the same
//   steps and within the same limits, the requests that asked for it get their guesses from a
//   smaller model with the same vocabulary, run on an engine (and KV pool) of its own: each such
//   request keeps a draft session that follows its tokens; the drafting requests of a step are
//   brought up to date in one batched draft pass, then guess one token each per further pass (the
//   draft's most likely token, until k or an unsure one). The target verifies them exactly as it
//   verifies lookup guesses, so the answer is again the plain decode's. The draft's cache is cut
//   back to the kept tokens after each verification and freed with the request (finish, cancel,
//   preemption).
// - Cancellation frees the request's blocks at the next step.
//
// Thread safety: submit() and cancel() may be called from any thread; step() from one thread at a
// time, which is also the thread that runs the event callbacks. Results are batch-invariant (the
// engine's numerics): a request's tokens do not depend on the other requests, the chunking or
// preemptions, and a seeded request samples the same tokens every time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sample/sampler.h"
#include "tokenizer/stream_decoder.h"
#include "tokenizer/tokenizer.h"
#include "wisp/engine.h"
#include "wisp/session.h"

namespace wisp {

using RequestId = std::uint64_t;

enum class FinishReason {
  kLength,       // max_tokens generated
  kStop,         // an end-of-generation token or a stop string
  kContextFull,  // the request reached its context limit (or a pool too small for it alone)
  kCancelled,
};

const char* finish_reason_name(FinishReason r);

// A token and its log-probability under the model's distribution (the log-softmax of the raw
// logits, before the sampler's penalties, temperature and filters).
struct TokenLogprob {
  TokenId token = -1;
  float logprob = 0.0f;
};

inline constexpr int kMaxTopLogprobs = 20;

struct RequestParams {
  std::vector<TokenId> prompt;   // at least one token
  std::size_t max_tokens = 128;  // tokens to generate at most (0: until a stop or the context limit)
  SamplerParams sampling;
  std::vector<std::string> stop;  // stop strings: generation ends before the first occurrence
  bool ignore_eos = false;        // keep going through end-of-generation tokens
  // -1: no log-probabilities; 0..kMaxTopLogprobs: each event carries the sampled token's
  // log-probability and that many most likely tokens with theirs.
  int logprobs = -1;
  // Speculative decoding by prompt lookup (a wisp extension): ngram_max 0 is off; otherwise up to
  // draft_max guesses per step, the tokens that followed the latest earlier occurrence of the
  // text's final ngram_max..ngram_min tokens.
  struct Lookup {
    std::size_t ngram_max = 0;
    std::size_t ngram_min = 2;  // clamped to ngram_max
    std::size_t draft_max = 8;
  } lookup;
  // Speculative decoding with the scheduler's draft model (SchedulerOptions::draft; not together
  // with lookup): up to lookup.draft_max guesses per step.
  bool draft = false;
};

inline constexpr std::size_t kMaxLookup = 64;  // most n-gram length and guesses per step

// What step() reports to a request's callback: each sampled token exactly once, with the text it
// released (complete UTF-8, never a part of a stop string); the last event has finished set, the
// reason, and the last token (-1 when none was sampled: a cancellation, a pool too small).
struct RequestEvent {
  RequestId id = 0;
  TokenId token = -1;     // the sampled token, -1 for the final event of a cancellation
  std::string_view text;  // printable text released by this event (may be empty)
  bool finished = false;
  FinishReason reason = FinishReason::kLength;
  std::size_t n_prompt = 0;     // prompt tokens
  std::size_t n_cached = 0;     // of them served from the prefix cache (at first admission)
  std::size_t n_generated = 0;  // tokens generated so far
  std::size_t n_drafted = 0;    // speculative guesses (prompt lookup or draft model) verified so far
  std::size_t n_accepted = 0;   // of them kept
  // With RequestParams::logprobs >= 0, for a sampled token (token >= 0): its log-probability and
  // the most likely tokens, most likely first (valid during the callback).
  bool has_logprob = false;
  float logprob = 0.0f;
  std::span<const TokenLogprob> top_logprobs;
};

using RequestCallback = std::function<void(const RequestEvent&)>;

struct SchedulerOptions {
  std::size_t step_tokens = 512;  // token budget per step (1 .. the engine's max_step_tokens)
  std::size_t max_running = 16;   // sequences in a step at most
  std::size_t max_context = 0;    // tokens per request at most (prompt + generated); 0: the pool's capacity
  bool prefix_cache = true;
  // Prompt-lookup guesses are added only to steps with at most this many decodes: each guess costs
  // a share of a whole step on the CPU (bench/RESULTS.md), so beside other decodes it slows them
  // more than it gains.
  std::size_t speculate_max_decodes = 1;
  // The draft model's engine, for requests with RequestParams::draft (null: none). Its own KV
  // pool holds the drafting requests' draft caches; it must share the target's vocabulary size
  // (the server also checks the token texts) and hold at least one request's context.
  std::shared_ptr<Engine> draft = nullptr;
  // A draft guess the draft model gives a probability below this ends that step's guesses: an
  // unsure guess is usually rejected and costs a draft pass and a verified row.
  float draft_p_min = 0.5f;
};

struct SchedulerStats {
  std::size_t running = 0;
  std::size_t waiting = 0;
  std::uint64_t steps = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t prompt_tokens = 0;  // prompt tokens computed (cached ones excluded)
  std::uint64_t generated_tokens = 0;
  std::uint64_t prefix_queries = 0;  // blocks looked up in the prefix cache
  std::uint64_t prefix_hits = 0;     // of them found
  std::uint64_t finished = 0;
  std::size_t max_running_seen = 0;  // most requests running in one step so far
  std::uint64_t spec_drafted = 0;    // speculative guesses (prompt lookup or draft model) verified
  std::uint64_t spec_accepted = 0;   // of them kept
  std::uint64_t draft_steps = 0;     // forward passes of the draft model
};

class Scheduler {
 public:
  // Throws wisp::Error for a step budget of 0 or above the engine's step size, or max_running 0.
  Scheduler(std::shared_ptr<Engine> engine, const Tokenizer& tokenizer, const SchedulerOptions& opts = {});
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Queues a request. Throws wisp::Error (queueing nothing) for an empty prompt, a token outside
  // the vocabulary, a prompt that leaves no room to generate within max_context, a prompt the
  // whole pool cannot hold, or bad sampling parameters.
  RequestId submit(RequestParams params, RequestCallback on_event);
  // Asks for a request to stop; its blocks are freed and its final event (kCancelled) sent at the
  // next step. False for an id that is unknown or already finished.
  bool cancel(RequestId id);

  // One step: takes in new requests and cancellations, schedules, runs one forward pass and
  // delivers events. Returns false (doing nothing) when no request is running or waiting.
  bool step();
  // Steps until no request is left.
  void run_until_idle();

  SchedulerStats stats() const;
  const Engine& engine() const { return *engine_; }
  const Engine* draft_engine() const { return opts_.draft.get(); }

 private:
  struct Request;
  void take_inbox();
  void finish(Request& r, FinishReason reason, TokenId token, std::string text = {});
  // Calls r's callback (if any); a reason makes it the final event.
  void emit(const Request& r, TokenId token, std::string_view text, std::optional<FinishReason> reason);
  void release(Request& r);
  bool admit(Request& r);
  void preempt_newest();
  void publish_blocks(Request& r);
  void on_logits(Request& r, std::span<const float> logits);
  // The rest of on_logits once `tok` is sampled: records, emits or finishes; false when finished.
  bool on_token(Request& r, std::span<const float> logits, TokenId tok);
  // Appends prompt-lookup guesses to r's planned decode within `budget` and the free blocks.
  void plan_guesses(Request& r, std::size_t& budget, std::size_t& committed);
  // The most guesses r may add to its planned decode within `budget` (context and max_tokens).
  std::size_t guess_limit(const Request& r, std::size_t budget) const;
  // Keeps as many of r.guesses as the free blocks allow and plans them into the step.
  void commit_guesses(Request& r, std::size_t& budget, std::size_t& committed);
  // Draft-model guesses for `drafting` (decodes that asked for them), in batched draft passes.
  void plan_drafts(const std::vector<Request*>& drafting, std::size_t& budget, std::size_t& committed);
  // Cuts r's draft cache back to the tokens it shares with r's known tokens.
  void trim_draft(Request& r);
  // Samples each row of a speculating request's step, keeping guesses while they match.
  void on_guess_rows(Request& r, std::span<const float> rows);
  std::size_t blocks_still_needed(const Request& r) const;
  void refresh_snapshot();  // copies the step thread's counters to what stats() returns

  std::shared_ptr<Engine> engine_;
  const Tokenizer& tokenizer_;
  SchedulerOptions opts_;

  mutable std::mutex inbox_mu_;  // guards the inbox, the id counter and the live-id set
  std::vector<std::unique_ptr<Request>> inbox_;
  std::vector<RequestId> cancels_;
  std::unordered_map<RequestId, bool> live_;  // submitted and not yet finished
  RequestId next_id_ = 1;

  std::deque<std::unique_ptr<Request>> waiting_;
  std::vector<std::unique_ptr<Request>> running_;  // in admission order
  SchedulerStats stats_;                           // the step thread's counters
  SchedulerStats snapshot_;                        // what stats() returns (under inbox_mu_), refreshed after each step
};

}  // namespace wisp
