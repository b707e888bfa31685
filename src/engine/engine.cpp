#include "wisp/engine.h"

#include <algorithm>
#include <string>
#include <thread>
#include <unordered_set>

#include "engine/engine_state.h"
#include "engine/backend_choice.h"
#include "model/kv_layout_for.h"
#include "model/model_state.h"
#include "wisp/error.h"
#include "wisp/session.h"

namespace wisp {

namespace {

std::unique_ptr<detail::EngineState> make_state(std::shared_ptr<const Model> model, EngineOptions opts) {
  if (!model) throw Error("engine: no model given");
  if (opts.block_size == 0) throw Error("engine: KV block size must be at least 1 token");
  if (opts.max_step_tokens == 0 || opts.max_step_tokens > static_cast<std::size_t>(model::Transformer::kMaxBatch)) {
    throw Error("engine: max_step_tokens " + std::to_string(opts.max_step_tokens) + " outside 1.." +
                std::to_string(model::Transformer::kMaxBatch));
  }
  opts.kv_tokens = detail::default_context(*model, opts.kv_tokens);
  if (opts.n_threads <= 0) opts.n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const std::size_t n_blocks = (opts.kv_tokens + opts.block_size - 1) / opts.block_size;
  if (n_blocks > 0xffffffffu)
    throw Error("engine: a KV pool of " + std::to_string(opts.kv_tokens) + " tokens is too many");
  const KvLayout layout = model::kv_layout_for(*model, opts.block_size, kv_type_from_name(opts.kv_type));
  const auto blocks = static_cast<std::uint32_t>(n_blocks);
  // Device memory besides the weights, for a device backend's fit check: the pool and a generous
  // bound on one full step's activations and logits.
  const model::HParams& hp = detail::model_state(*model).hp;
  const std::size_t step_floats =
      opts.max_step_tokens * static_cast<std::size_t>(8 * hp.n_embd + 2 * hp.n_ff + hp.n_vocab);
  detail::BackendChoice choice = detail::choose_backend(
      detail::model_state(*model), opts, std::size_t{blocks} * layout.bytes_per_block() + step_floats * sizeof(float));
  std::unique_ptr<KvStorage> storage = choice.backend->make_kv_storage(layout, blocks, opts.kv_resident);
  auto st = std::make_unique<detail::EngineState>(detail::EngineState{
      model, opts, KvPool(std::move(storage)), std::move(choice.backend), nullptr, {}, {}, {}, {}, choice.device});
  st->transformer = std::make_unique<model::Transformer>(
      detail::model_state(*model), *st->backend,
      model::KvNumerics{.round_f16 = opts.kv_f16_rounding, .batch_invariant = !opts.exact},
      static_cast<std::int64_t>(opts.kv_tokens));
  return st;
}

}  // namespace

Engine::Engine(std::unique_ptr<detail::EngineState> state) : state_(std::move(state)) {}
Engine::~Engine() = default;

std::shared_ptr<Engine> Engine::create(std::shared_ptr<const Model> model, const EngineOptions& opts) {
  return std::shared_ptr<Engine>(new Engine(make_state(std::move(model), opts)));
}

void Engine::step(std::span<const StepEntry> entries) {
  detail::EngineState& st = *state_;
  const std::int64_t n_vocab = st.model->info().n_vocab;
  if (entries.empty()) throw Error("step: no sessions to evaluate");

  // Everything is checked before the pool changes.
  std::size_t total = 0;
  std::unordered_set<const Session*> seen;
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const StepEntry& en = entries[e];
    const std::string where = "step: entry " + std::to_string(e) + ": ";
    if (en.session == nullptr) throw Error(where + "no session");
    if (&en.session->engine() != this) throw Error(where + "the session belongs to another engine");
    if (!seen.insert(en.session).second) throw Error(where + "the session appears twice in one step");
    if (en.tokens.empty()) throw Error(where + "empty token list (nothing to evaluate)");
    for (std::size_t i = 0; i < en.tokens.size(); ++i) {
      if (en.tokens[i] < 0 || en.tokens[i] >= n_vocab) {
        throw Error(where + "token " + std::to_string(i) + " has id " + std::to_string(en.tokens[i]) +
                    ", outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
      }
    }
    const detail::SessionState& ss = detail::session_state(*en.session);
    const std::size_t n_past = ss.seq.n_tokens();
    if (n_past + en.tokens.size() > ss.n_ctx) {
      throw Error("context full: the session holds " + std::to_string(n_past) + " tokens and " +
                  std::to_string(en.tokens.size()) + " more would exceed its context of " + std::to_string(ss.n_ctx) +
                  " tokens");
    }
    total += en.tokens.size();
  }
  if (total > st.opts.max_step_tokens) {
    throw Error("step: " + std::to_string(total) + " tokens, more than the engine's " +
                std::to_string(st.opts.max_step_tokens) + " per step");
  }

  // Reserve every entry's slots; undo them all if one cannot be had.
  std::vector<std::size_t> n_past(entries.size());
  std::size_t reserved = 0;
  const auto roll_back = [&] {
    for (std::size_t e = 0; e < reserved; ++e)
      st.pool.truncate(detail::session_state(*entries[e].session).seq.id(), n_past[e]);
  };
  try {
    for (; reserved < entries.size(); ++reserved) {
      const detail::SessionState& ss = detail::session_state(*entries[reserved].session);
      n_past[reserved] = ss.seq.n_tokens();
      st.pool.append(ss.seq.id(), entries[reserved].tokens.size());  // throws "KV pool exhausted"
    }
  } catch (...) {
    roll_back();
    throw;
  }

  st.batch.clear();
  st.tokens.clear();
  st.logit_rows.clear();
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const StepEntry& en = entries[e];
    const auto n = static_cast<std::int64_t>(en.tokens.size());
    const std::int64_t row0 =
        st.batch.add(detail::session_state(*en.session).seq.id(), static_cast<std::int64_t>(n_past[e]), n);
    st.tokens.insert(st.tokens.end(), en.tokens.begin(), en.tokens.end());
    if (en.logits == Logits::kLast) st.logit_rows.push_back(row0 + n - 1);
    if (en.logits == Logits::kAll) {
      for (std::int64_t r = 0; r < n; ++r) st.logit_rows.push_back(row0 + r);
    }
  }
  st.logits.resize(st.logit_rows.size() * static_cast<std::size_t>(n_vocab));
  try {
    st.transformer->forward(st.pool, st.batch, st.tokens, st.logit_rows, st.logits);
  } catch (...) {
    roll_back();
    throw;
  }

  // Hand each session its rows (entries asked for them in entry order).
  std::size_t at = 0;
  for (const StepEntry& en : entries) {
    const std::size_t rows = en.logits == Logits::kNone ? 0 : en.logits == Logits::kLast ? 1 : en.tokens.size();
    const auto first = st.logits.begin() + static_cast<std::ptrdiff_t>(at * static_cast<std::size_t>(n_vocab));
    detail::session_state(*en.session)
        .logits.assign(first, first + static_cast<std::ptrdiff_t>(rows * static_cast<std::size_t>(n_vocab)));
    at += rows;
  }
}

const Model& Engine::model() const { return *state_->model; }
std::shared_ptr<const Model> Engine::model_ptr() const { return state_->model; }
const EngineOptions& Engine::options() const { return state_->opts; }
int Engine::n_threads() const { return state_->opts.n_threads; }

std::size_t Engine::kv_capacity_tokens() const {
  return std::size_t{state_->pool.allocator().n_blocks()} * state_->pool.layout().block_size;
}
std::size_t Engine::kv_free_tokens() const {
  return std::size_t{state_->pool.allocator().n_available()} * state_->pool.layout().block_size;
}
std::size_t Engine::kv_bytes() const { return state_->pool.bytes_total(); }
std::size_t Engine::kv_bytes_per_token() const { return state_->pool.bytes_per_token(); }
std::string_view Engine::kv_type() const { return kv_type_name(state_->pool.layout().type); }
std::uint32_t Engine::block_size() const { return state_->pool.layout().block_size; }
const std::string& Engine::device() const { return state_->device; }

}  // namespace wisp
