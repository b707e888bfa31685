#include "engine/scheduler.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
#include <string>

#include "engine/engine_state.h"
#include "sample/ngram_lookup.h"
#include "wisp/error.h"

namespace wisp {

const char* finish_reason_name(FinishReason r) {
  switch (r) {
    case FinishReason::kLength: return "length";
    case FinishReason::kStop: return "stop";
    case FinishReason::kContextFull: return "context_full";
    case FinishReason::kCancelled: return "cancelled";
  }
  return "?";
}

struct Scheduler::Request {
  RequestId id = 0;
  RequestParams params;
  RequestCallback cb;
  Sampler sampler;
  TokenStreamDecoder decoder;
  std::vector<TokenId> tokens;  // known tokens: the prompt, then each generated one
  std::size_t n_prompt = 0;
  std::size_t n_generated = 0;
  std::size_t n_cached = 0;  // prompt tokens served by the prefix cache at first admission
  bool admitted_before = false;
  std::optional<Session> session;               // while admitted
  std::size_t n_published = 0;                  // leading full blocks published (or found) in the prefix cache
  BlockHash chain = BlockAllocator::kRootHash;  // hash of block n_published - 1
  std::string held;                             // decoded text not yet released: it might be the start of a stop string
  std::size_t planned = 0;                      // tokens this step evaluates
  float logprob = 0.0f;                         // of the last sampled token (params.logprobs >= 0)
  std::vector<TokenLogprob> top;                // its most likely alternatives
  std::vector<std::int32_t> order;              // scratch for ranking the vocabulary
  // Prompt lookup (params.lookup.ngram_max > 0): guesses asked for per step (adapts to how many are
  // kept), this step's guesses, the step's tokens (the pending one, then the guesses), the counts.
  std::size_t k = 0;
  std::vector<TokenId> guesses;
  std::vector<TokenId> batch;
  std::size_t n_drafted = 0;
  std::size_t n_accepted = 0;
  // Draft-model speculation (params.draft): the draft engine's session following `tokens`, and
  // exactly the tokens it holds (known ones, then the guesses of the last drafting step).
  std::optional<Session> draft_session;
  std::vector<TokenId> draft_held;

  Request(RequestId i, RequestParams p, RequestCallback c, const Tokenizer& tok)
      : id(i), params(std::move(p)), cb(std::move(c)), sampler(params.sampling), decoder(tok) {}

  std::size_t n_past() const { return session ? session->n_past() : 0; }
  std::size_t remaining() const { return tokens.size() - n_past(); }
};

namespace {

KvPool& pool_of(Engine& e) { return detail::engine_state(e).pool; }

}  // namespace

Scheduler::Scheduler(std::shared_ptr<Engine> engine, const Tokenizer& tokenizer, const SchedulerOptions& opts)
    : engine_(std::move(engine)), tokenizer_(tokenizer), opts_(opts) {
  if (!engine_) throw Error("scheduler: no engine given");
  if (opts_.step_tokens == 0 || opts_.step_tokens > engine_->options().max_step_tokens) {
    throw Error("scheduler: step budget of " + std::to_string(opts_.step_tokens) + " tokens (1 to " +
                std::to_string(engine_->options().max_step_tokens) + " allowed: the engine's step size)");
  }
  if (opts_.max_running == 0) throw Error("scheduler: max_running must be at least 1");
  if (opts_.max_context == 0 || opts_.max_context > engine_->kv_capacity_tokens()) {
    opts_.max_context = engine_->kv_capacity_tokens();
  }
  if (opts_.draft) {
    const Engine& d = *opts_.draft;
    if (d.model().info().n_vocab != engine_->model().info().n_vocab) {
      throw Error("scheduler: the draft model has a vocabulary of " + std::to_string(d.model().info().n_vocab) +
                  " tokens, the target's has " + std::to_string(engine_->model().info().n_vocab) +
                  ": a draft model must share the target's vocabulary");
    }
    // Guesses are verified against plain-decode rows, which only batch-invariant numerics give.
    if (engine_->options().exact || d.options().exact) {
      throw Error("scheduler: a draft model needs the default (batch-invariant) numerics, not exact");
    }
    if (!(opts_.draft_p_min >= 0.0f && opts_.draft_p_min <= 1.0f)) {
      throw Error("scheduler: draft_p_min must be in [0, 1], got " + std::to_string(opts_.draft_p_min));
    }
  }
}

Scheduler::~Scheduler() = default;

RequestId Scheduler::submit(RequestParams params, RequestCallback on_event) {
  const std::int64_t n_vocab = engine_->model().info().n_vocab;
  if (params.prompt.empty()) throw Error("request: the prompt has no tokens");
  for (std::size_t i = 0; i < params.prompt.size(); ++i) {
    if (params.prompt[i] < 0 || params.prompt[i] >= n_vocab) {
      throw Error("request: prompt token " + std::to_string(i) + " has id " + std::to_string(params.prompt[i]) +
                  ", outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
    }
  }
  if (params.prompt.size() >= opts_.max_context) {
    throw Error("request: the prompt has " + std::to_string(params.prompt.size()) + " tokens, the context holds " +
                std::to_string(opts_.max_context) + " (prompt and at least one generated token must fit)");
  }
  params.sampling.validate();
  for (const std::string& s : params.stop) {
    if (s.empty()) throw Error("request: an empty stop string");
  }
  if (params.logprobs < -1 || params.logprobs > kMaxTopLogprobs) {
    throw Error("request: logprobs must be -1 (none) to " + std::to_string(kMaxTopLogprobs) + ", got " +
                std::to_string(params.logprobs));
  }
  RequestParams::Lookup& lk = params.lookup;
  if (params.draft) {
    if (!opts_.draft) throw Error("request: speculative decoding with a draft model, but no draft model is loaded");
    if (lk.ngram_max > 0) throw Error("request: a draft model and prompt lookup together (ask for one)");
    if (lk.draft_max == 0 || lk.draft_max > kMaxLookup) {
      throw Error("request: draft model speculation of " + std::to_string(lk.draft_max) + " guesses per step (1 to " +
                  std::to_string(kMaxLookup) + " allowed)");
    }
  }
  if (lk.ngram_max > 0) {
    if (lk.ngram_max > kMaxLookup) {
      throw Error("request: prompt lookup n-gram of " + std::to_string(lk.ngram_max) + " tokens (1 to " +
                  std::to_string(kMaxLookup) + " allowed)");
    }
    if (lk.draft_max == 0 || lk.draft_max > kMaxLookup) {
      throw Error("request: prompt lookup of " + std::to_string(lk.draft_max) + " guesses per step (1 to " +
                  std::to_string(kMaxLookup) + " allowed)");
    }
    // With llama.cpp's batch-dependent float order the verified rows could differ from a plain
    // decode's in the last bits, and so could the answer: speculation is only offered exact.
    if (engine_->options().exact) {
      throw Error("request: speculative decoding needs the engine's default (batch-invariant) numerics, not exact");
    }
    lk.ngram_min = std::clamp<std::size_t>(lk.ngram_min, 1, lk.ngram_max);
  }
  std::lock_guard lock(inbox_mu_);
  const RequestId id = next_id_++;
  auto r = std::make_unique<Request>(id, std::move(params), std::move(on_event), tokenizer_);
  r->tokens = r->params.prompt;
  r->n_prompt = r->tokens.size();
  r->k = std::min<std::size_t>(4, r->params.lookup.draft_max);
  for (TokenId t : r->tokens) r->sampler.accept(t);
  inbox_.push_back(std::move(r));
  live_.emplace(id, true);
  return id;
}

bool Scheduler::cancel(RequestId id) {
  std::lock_guard lock(inbox_mu_);
  if (!live_.contains(id)) return false;
  cancels_.push_back(id);
  return true;
}

void Scheduler::take_inbox() {
  std::vector<RequestId> cancels;
  {
    std::lock_guard lock(inbox_mu_);
    for (auto& r : inbox_) waiting_.push_back(std::move(r));
    inbox_.clear();
    cancels.swap(cancels_);
  }
  for (RequestId id : cancels) {
    for (auto it = running_.begin(); it != running_.end(); ++it) {
      if ((*it)->id == id) {
        finish(**it, FinishReason::kCancelled, -1);
        running_.erase(it);
        break;
      }
    }
    for (auto it = waiting_.begin(); it != waiting_.end(); ++it) {
      if ((*it)->id == id) {
        finish(**it, FinishReason::kCancelled, -1);
        waiting_.erase(it);
        break;
      }
    }
  }
}

void Scheduler::release(Request& r) {
  r.session.reset();
  r.draft_session.reset();  // the draft's blocks go back to its pool with the target's
  r.draft_held.clear();
}

void Scheduler::finish(Request& r, FinishReason reason, TokenId token, std::string text) {
  release(r);
  if (reason != FinishReason::kCancelled && reason != FinishReason::kStop) {
    text += r.held + r.decoder.finish();  // nothing more can complete a stop string
  }
  r.held.clear();
  {
    std::lock_guard lock(inbox_mu_);
    live_.erase(r.id);
  }
  ++stats_.finished;
  emit(r, token, text, reason);
}

void Scheduler::emit(const Request& r, TokenId token, std::string_view text, std::optional<FinishReason> reason) {
  if (!r.cb) return;
  RequestEvent ev;
  ev.id = r.id;
  ev.token = token;
  ev.text = text;
  ev.finished = reason.has_value();
  ev.reason = reason.value_or(FinishReason::kLength);
  ev.n_prompt = r.n_prompt;
  ev.n_cached = r.n_cached;
  ev.n_generated = r.n_generated;
  ev.n_drafted = r.n_drafted;
  ev.n_accepted = r.n_accepted;
  if (token >= 0 && r.params.logprobs >= 0) {
    ev.has_logprob = true;
    ev.logprob = r.logprob;
    ev.top_logprobs = r.top;
  }
  r.cb(ev);
}

std::size_t Scheduler::blocks_still_needed(const Request& r) const {
  const BlockAllocator& a = pool_of(*engine_).allocator();
  const std::size_t after = r.n_past() + r.planned;
  const std::size_t want = a.blocks_for(r.tokens.size());
  const std::size_t have = a.blocks_for(after);
  return want > have ? want - have : 0;
}

bool Scheduler::admit(Request& r) {
  KvPool& pool = pool_of(*engine_);
  const BlockAllocator& a = pool.allocator();
  r.session.emplace(engine_, SessionOptions{.n_ctx = opts_.max_context});
  const SeqId seq = detail::session_state(*r.session).seq.id();
  std::size_t attached = 0;
  if (opts_.prefix_cache) {
    // At least the last known token is computed: its logits are what the request needs next.
    const std::size_t usable = (r.tokens.size() - 1) / a.block_size();
    std::vector<BlockHash> hashes = a.block_hashes(std::span(r.tokens).first(usable * a.block_size()));
    attached = pool.attach_cached(seq, hashes, std::span(r.tokens).first(usable * a.block_size()));
    stats_.prefix_queries += hashes.size();
    stats_.prefix_hits += attached;
    r.n_published = attached;
    r.chain = attached > 0 ? hashes[attached - 1] : BlockAllocator::kRootHash;
  }
  std::size_t outstanding = 0;
  std::size_t committed = 0;
  for (const auto& other : running_) {
    outstanding += blocks_still_needed(*other);
    committed +=
        other->planned > 0 ? a.blocks_needed(detail::session_state(*other->session).seq.id(), other->planned) : 0;
  }
  const std::size_t need = a.blocks_for(r.tokens.size()) - attached;
  const std::size_t avail = a.n_available() > committed ? a.n_available() - committed : 0;
  if (need + outstanding > avail) {
    r.session.reset();  // the attached blocks go back to the cache
    r.n_published = 0;
    r.chain = BlockAllocator::kRootHash;
    return false;
  }
  if (!r.admitted_before) r.n_cached = attached * a.block_size();
  r.admitted_before = true;
  return true;
}

void Scheduler::preempt_newest() {
  std::unique_ptr<Request> r = std::move(running_.back());
  running_.pop_back();
  release(*r);  // full blocks stay in the prefix cache: the recompute may find them
  r->n_published = 0;
  r->chain = BlockAllocator::kRootHash;
  r->planned = 0;
  ++stats_.preemptions;
  waiting_.push_front(std::move(r));
}

void Scheduler::publish_blocks(Request& r) {
  if (!opts_.prefix_cache || !r.session) return;
  KvPool& pool = pool_of(*engine_);
  const std::uint32_t bs = pool.allocator().block_size();
  const SeqId seq = detail::session_state(*r.session).seq.id();
  // Only known tokens: a speculating session holds unverified guesses beyond them until its rows
  // are decided.
  const std::size_t known = std::min(r.n_past(), r.tokens.size());
  while ((r.n_published + 1) * bs <= known) {
    const auto block = std::span(r.tokens).subspan(r.n_published * bs, bs);
    r.chain = BlockAllocator::chain_hash(r.chain, block);
    pool.publish(seq, r.n_published, r.chain, block);  // false: another block already holds it
    ++r.n_published;
  }
}

namespace {

// The log-softmax of the raw logits at `tok`, and the `k` most likely tokens with theirs.
void token_logprobs(std::span<const float> logits, TokenId tok, int k, float& logprob, std::vector<TokenLogprob>& top,
                    std::vector<std::int32_t>& order) {
  float mx = -std::numeric_limits<float>::infinity();
  for (float v : logits) mx = std::max(mx, v);
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - mx);
  const double lse = mx + std::log(sum);
  logprob = static_cast<float>(logits[static_cast<std::size_t>(tok)] - lse);
  top.clear();
  if (k <= 0) return;
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(k), logits.size());
  order.resize(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(
      order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n), order.end(),
      [&](std::int32_t a, std::int32_t b) { return logits[a] != logits[b] ? logits[a] > logits[b] : a < b; });
  for (std::size_t i = 0; i < n; ++i) top.push_back({order[i], static_cast<float>(logits[order[i]] - lse)});
}

}  // namespace

void Scheduler::on_logits(Request& r, std::span<const float> logits) { on_token(r, logits, r.sampler.sample(logits)); }

bool Scheduler::on_token(Request& r, std::span<const float> logits, TokenId tok) {
  if (r.params.logprobs >= 0) token_logprobs(logits, tok, r.params.logprobs, r.logprob, r.top, r.order);
  r.sampler.accept(tok);
  ++r.n_generated;
  ++stats_.generated_tokens;
  const bool eog = tokenizer_.is_eog(tok) && !r.params.ignore_eos;
  std::string text = eog ? r.decoder.finish() : r.decoder.push(tok);
  r.held += text;
  // Stop strings: release text only up to where a stop string could still begin.
  std::optional<FinishReason> reason;
  if (!r.params.stop.empty()) {
    std::size_t cut = std::string::npos;
    for (const std::string& s : r.params.stop) cut = std::min(cut, r.held.find(s));
    if (cut != std::string::npos) {
      r.held.resize(cut);
      reason = FinishReason::kStop;
    }
  }
  if (!reason && eog) reason = FinishReason::kStop;
  if (!reason && r.params.max_tokens > 0 && r.n_generated >= r.params.max_tokens) reason = FinishReason::kLength;
  if (!reason && r.tokens.size() + 1 > opts_.max_context) reason = FinishReason::kContextFull;

  std::size_t keep = 0;  // bytes held back: the longest tail that is a proper prefix of a stop string
  if (!reason) {
    for (const std::string& s : r.params.stop) {
      for (std::size_t k = std::min(s.size() - 1, r.held.size()); k > keep; --k) {
        if (r.held.compare(r.held.size() - k, k, s, 0, k) == 0) {
          keep = k;
          break;
        }
      }
    }
  }
  std::string out = r.held.substr(0, r.held.size() - keep);
  r.held.erase(0, r.held.size() - keep);
  if (reason) {
    finish(r, *reason, tok, std::move(out));  // the last token and its text come with the final event
    return false;
  }
  r.tokens.push_back(tok);
  emit(r, tok, out, std::nullopt);
  return true;
}

std::size_t Scheduler::guess_limit(const Request& r, std::size_t budget) const {
  // The session must hold the pending token and every guess (n_ctx is max_context); guesses past
  // the tokens still wanted could never be kept.
  std::size_t k = std::min(r.k, budget);
  k = std::min(k, opts_.max_context > r.tokens.size() ? opts_.max_context - r.tokens.size() : 0);
  if (r.params.max_tokens > 0) {
    const std::size_t left = r.params.max_tokens > r.n_generated ? r.params.max_tokens - r.n_generated : 0;
    k = std::min(k, left > 0 ? left - 1 : 0);
  }
  return k;
}

void Scheduler::plan_guesses(Request& r, std::size_t& budget, std::size_t& committed) {
  const RequestParams::Lookup& lk = r.params.lookup;
  const std::size_t k = guess_limit(r, budget);
  if (k == 0) return;
  r.guesses = ngram_lookup(r.tokens, lk.ngram_max, lk.ngram_min, k);
  commit_guesses(r, budget, committed);
}

void Scheduler::commit_guesses(Request& r, std::size_t& budget, std::size_t& committed) {
  if (r.guesses.empty()) return;
  const BlockAllocator& a = pool_of(*engine_).allocator();
  const SeqId seq = detail::session_state(*r.session).seq.id();
  const std::size_t avail = a.n_available() > committed ? a.n_available() - committed : 0;
  const std::size_t base = a.blocks_needed(seq, 1);  // already committed for the pending token
  while (!r.guesses.empty() && a.blocks_needed(seq, 1 + r.guesses.size()) - base > avail) r.guesses.pop_back();
  if (r.guesses.empty()) return;
  committed += a.blocks_needed(seq, 1 + r.guesses.size()) - base;
  budget -= r.guesses.size();
  r.planned = 1 + r.guesses.size();
  r.batch.assign(1, r.tokens.back());
  r.batch.insert(r.batch.end(), r.guesses.begin(), r.guesses.end());
}

namespace {

// The draft's guess from its logits: the most likely token and its softmax probability.
TokenId most_likely(std::span<const float> logits, float& probability) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < logits.size(); ++i) {
    if (logits[i] > logits[best]) best = i;
  }
  double sum = 0.0;
  for (float l : logits) sum += std::exp(static_cast<double>(l) - logits[best]);
  probability = static_cast<float>(1.0 / sum);
  return static_cast<TokenId>(best);
}

}  // namespace

void Scheduler::trim_draft(Request& r) {
  if (!r.draft_session) return;
  std::size_t common = 0;
  while (common < r.draft_held.size() && common < r.tokens.size() && r.draft_held[common] == r.tokens[common]) {
    ++common;
  }
  r.draft_session->truncate(common);  // rejected guesses' draft KV goes back to the draft's pool
  r.draft_held.resize(common);
}

void Scheduler::plan_drafts(const std::vector<Request*>& drafting, std::size_t& budget, std::size_t& committed) {
  Engine& d = *opts_.draft;
  const BlockAllocator& da = pool_of(d).allocator();
  const std::size_t draft_ctx = std::min(opts_.max_context, d.kv_capacity_tokens());
  struct Job {
    Request* r;
    std::size_t k;     // guesses wanted at most
    std::size_t from;  // first known token the draft has not evaluated
    bool done = false;
  };
  std::vector<Job> jobs;
  std::size_t left = budget;   // the target's step budget, reserved for each job's k
  std::size_t draft_used = 0;  // draft blocks the jobs will take
  for (Request* r : drafting) {
    std::size_t k = guess_limit(*r, left);
    // The draft holds the known tokens and all guesses but the last.
    if (k == 0 || r->tokens.size() + k - 1 > draft_ctx) continue;
    if (!r->draft_session) r->draft_session.emplace(opts_.draft, SessionOptions{.n_ctx = draft_ctx});
    trim_draft(*r);
    // The logits after the last known token are needed, so at least that token is evaluated.
    std::size_t from = std::min(r->draft_held.size(), r->tokens.size() - 1);
    r->draft_session->truncate(from);
    r->draft_held.resize(from);
    const SeqId seq = detail::session_state(*r->draft_session).seq.id();
    const std::size_t avail = da.n_available() > draft_used ? da.n_available() - draft_used : 0;
    const std::size_t fresh = r->tokens.size() - from;
    while (k > 0 && da.blocks_needed(seq, fresh + k - 1) > avail) --k;
    if (k == 0) continue;
    draft_used += da.blocks_needed(seq, fresh + k - 1);
    left -= k;
    jobs.push_back({r, k, from});
  }
  if (jobs.empty()) return;
  try {
    // Catch-up passes: every job's known tokens the draft has not seen (the whole prompt the first
    // time, then the last verification's new tokens), as many per pass as the draft's step takes.
    const std::size_t step_max = d.options().max_step_tokens;
    std::vector<StepEntry> entries;
    std::vector<std::size_t> at(jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) at[j] = jobs[j].from;
    for (;;) {
      entries.clear();
      std::size_t room = step_max;
      for (std::size_t j = 0; j < jobs.size() && room > 0; ++j) {
        Request& r = *jobs[j].r;
        const std::size_t rest = r.tokens.size() - at[j];
        if (rest == 0) continue;
        const std::size_t n = std::min(rest, room);
        entries.push_back(
            {&*r.draft_session, std::span(r.tokens).subspan(at[j], n), n == rest ? Logits::kLast : Logits::kNone});
        at[j] += n;
        room -= n;
      }
      if (entries.empty()) break;
      d.step(entries);
      ++stats_.draft_steps;
    }
    for (Job& j : jobs) j.r->draft_held = j.r->tokens;
    // Guess passes: each job's most likely next token, evaluated by the draft in one batched pass
    // unless it is the job's last guess (its logits are never needed).
    std::vector<Request*> fed;
    for (;;) {
      entries.clear();
      fed.clear();
      for (Job& j : jobs) {
        if (j.done) continue;
        Request& r = *j.r;
        float probability = 0.0f;
        const TokenId tok = most_likely(r.draft_session->logits(), probability);
        if (probability < opts_.draft_p_min) {
          j.done = true;
          continue;
        }
        r.guesses.push_back(tok);
        if (r.guesses.size() == j.k) {
          j.done = true;
          continue;
        }
        entries.push_back({&*r.draft_session, std::span(&r.guesses.back(), 1), Logits::kLast});
        fed.push_back(&r);
      }
      if (entries.empty()) break;
      d.step(entries);
      ++stats_.draft_steps;
      for (Request* r : fed) r->draft_held.push_back(r->guesses.back());
    }
  } catch (const Error&) {
    // A draft pass failed (its pool, say): no guesses this step, and the draft caches start over;
    // the answers are unaffected.
    for (Job& j : jobs) {
      j.r->guesses.clear();
      j.r->draft_session.reset();
      j.r->draft_held.clear();
    }
    return;
  }
  for (Job& j : jobs) commit_guesses(*j.r, budget, committed);
}

void Scheduler::on_guess_rows(Request& r, std::span<const float> rows) {
  const std::size_t nd = r.guesses.size();
  const std::size_t n_vocab = static_cast<std::size_t>(engine_->model().info().n_vocab);
  r.n_drafted += nd;
  stats_.spec_drafted += nd;
  std::size_t kept = 0;
  for (std::size_t i = 0; i <= nd; ++i) {
    // Row i is the logits after the pending token and guesses 0..i-1, all of them known tokens by
    // now: sampling it is exactly the plain decode's step (same sampler state, same draws).
    const std::span<const float> row = rows.subspan(i * n_vocab, n_vocab);
    const TokenId tok = r.sampler.sample(row);
    const bool keep = i < nd && tok == r.guesses[i];
    if (keep) {
      ++kept;
      ++r.n_accepted;
      ++stats_.spec_accepted;
    } else {
      r.session->truncate(r.tokens.size());  // the rejected guesses' KV goes (blocks back to the pool)
    }
    publish_blocks(r);
    if (!on_token(r, row, tok) || !keep) break;
  }
  r.k = kept == nd ? std::min(r.params.lookup.draft_max, r.k + 2) : std::max<std::size_t>(1, r.k - 1);
  r.guesses.clear();
}

bool Scheduler::step() {
  take_inbox();
  if (running_.empty() && waiting_.empty()) {
    refresh_snapshot();  // the inbox's cancellations may have just finished the last requests
    return false;
  }
  KvPool& pool = pool_of(*engine_);
  const BlockAllocator& a = pool.allocator();
  std::size_t budget = opts_.step_tokens;
  std::size_t committed = 0;  // blocks the step's entries will take
  const auto avail = [&] { return a.n_available() > committed ? a.n_available() - committed : 0; };
  for (auto& r : running_) {
    r->planned = 0;
    r->guesses.clear();
  }

  // 1. Decodes, oldest first; the newest requests give way when the pool runs dry.
  for (std::size_t i = 0; i < running_.size() && budget > 0; ++i) {
    Request& r = *running_[i];
    if (r.remaining() != 1) continue;
    const SeqId seq = detail::session_state(*r.session).seq.id();
    while (a.blocks_needed(seq, 1) > avail()) {
      if (running_.size() == 1) break;
      const bool self = i == running_.size() - 1;
      preempt_newest();
      if (self) break;
    }
    if (i >= running_.size()) break;  // r itself was preempted
    if (a.blocks_needed(seq, 1) > avail()) {
      // Alone and still no room: the pool cannot hold this request's next token.
      finish(r, FinishReason::kContextFull, -1);
      running_.erase(running_.begin() + static_cast<std::ptrdiff_t>(i));
      --i;
      continue;
    }
    committed += a.blocks_needed(seq, 1);
    r.planned = 1;
    --budget;
  }
  // 2. Chunks of the running requests' prompts, oldest first, as far as blocks allow.
  for (auto& rp : running_) {
    Request& r = *rp;
    if (budget == 0) break;
    if (r.planned > 0 || r.remaining() <= 1) continue;
    const SeqId seq = detail::session_state(*r.session).seq.id();
    std::size_t n = std::min(r.remaining(), budget);
    while (n > 0 && a.blocks_needed(seq, n) > avail()) n = n > a.block_size() ? n - a.block_size() : n - 1;
    if (n == 0) continue;
    committed += a.blocks_needed(seq, n);
    r.planned = n;
    budget -= n;
  }
  // 3. Admission from the head of the queue.
  while (!waiting_.empty() && running_.size() < opts_.max_running && budget > 0) {
    Request& r = *waiting_.front();
    if (!admit(r)) break;
    const SeqId seq = detail::session_state(*r.session).seq.id();
    std::size_t n = std::min(r.remaining(), budget);
    while (n > 0 && a.blocks_needed(seq, n) > avail()) n = n > a.block_size() ? n - a.block_size() : n - 1;
    if (n == 0) {
      release(r);
      break;
    }
    committed += a.blocks_needed(seq, n);
    r.planned = n;
    budget -= n;
    running_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
  // 4. Prompt-lookup guesses on the decodes that asked for them, in what budget and blocks are left,
  // when the step has few enough decodes for guesses not to slow the others.
  const auto n_decodes = static_cast<std::size_t>(std::count_if(
      running_.begin(), running_.end(), [](const auto& r) { return r->planned == 1 && r->remaining() == 1; }));
  std::vector<Request*> drafting;
  for (auto& rp : running_) {
    Request& r = *rp;
    if (budget == 0 || n_decodes > opts_.speculate_max_decodes) break;
    if (r.planned != 1 || r.remaining() != 1) continue;
    if (r.params.draft) {
      drafting.push_back(&r);
    } else if (r.params.lookup.ngram_max > 0) {
      plan_guesses(r, budget, committed);
    }
  }
  if (!drafting.empty() && budget > 0) plan_drafts(drafting, budget, committed);

  std::vector<StepEntry> entries;
  std::vector<Request*> who;
  for (auto& rp : running_) {
    Request& r = *rp;
    if (r.planned == 0) continue;
    if (!r.guesses.empty()) {
      entries.push_back({&*r.session, r.batch, Logits::kAll});
      who.push_back(&r);
      continue;
    }
    const bool to_end = r.planned == r.remaining();
    entries.push_back(
        {&*r.session, std::span(r.tokens).subspan(r.n_past(), r.planned), to_end ? Logits::kLast : Logits::kNone});
    who.push_back(&r);
    if (r.n_past() < r.n_prompt) stats_.prompt_tokens += std::min(r.planned, r.n_prompt - r.n_past());
  }
  stats_.max_running_seen = std::max(stats_.max_running_seen, running_.size());
  if (!entries.empty()) {
    engine_->step(entries);
    ++stats_.steps;
  }
  // Outputs: publish full blocks, sample where logits came back, retire finished requests.
  for (std::size_t e = 0; e < entries.size(); ++e) {
    Request& r = *who[e];
    r.planned = 0;
    if (entries[e].logits == Logits::kAll) {
      on_guess_rows(r, r.session->logits());
      trim_draft(r);  // a draft request's cache keeps only the guesses that were kept
      continue;
    }
    publish_blocks(r);
    if (entries[e].logits == Logits::kLast) {
      on_logits(r, r.session ? r.session->logits() : std::span<const float>{});
    }
  }
  std::erase_if(running_, [&](const std::unique_ptr<Request>& r) { return !r->session; });
  refresh_snapshot();
  return true;
}

void Scheduler::refresh_snapshot() {
  std::lock_guard lock(inbox_mu_);
  snapshot_ = stats_;
  snapshot_.running = running_.size();
  snapshot_.waiting = waiting_.size() + inbox_.size();
}

void Scheduler::run_until_idle() {
  while (step()) {
  }
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard lock(inbox_mu_);
  return snapshot_;
}

}  // namespace wisp
