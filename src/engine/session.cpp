#include "wisp/session.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/engine_state.h"
#include "wisp/error.h"

namespace wisp {

namespace {

std::shared_ptr<Engine> own_engine(std::shared_ptr<const Model> model, const SessionOptions& opts) {
  if (!model) throw Error("session: no model given");
  EngineOptions eo;
  eo.n_threads = opts.n_threads;
  eo.kv_tokens = detail::default_context(*model, opts.n_ctx);
  eo.kv_type = opts.kv_type;
  eo.kv_f16_rounding = opts.kv_f16_rounding;
  eo.exact = opts.exact;
  eo.exact_isa = opts.exact_isa;
  eo.device = opts.device;
  return Engine::create(std::move(model), eo);
}

}  // namespace

Session::Session(std::unique_ptr<detail::SessionState> state) : state_(std::move(state)) {}

Session::Session(std::shared_ptr<Engine> engine, const SessionOptions& opts) {
  if (!engine) throw Error("session: no engine given");
  const std::size_t ctx = detail::default_context(engine->model(), opts.n_ctx);
  KvSequence seq(detail::engine_state(*engine).pool);
  state_ = std::make_unique<detail::SessionState>(std::move(engine), std::move(seq), ctx);
}

Session::Session(std::shared_ptr<const Model> model, const SessionOptions& opts)
    : Session(own_engine(std::move(model), opts), opts) {}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

std::span<const float> Session::eval(std::span<const std::int32_t> tokens) { return run(tokens, false); }
std::span<const float> Session::eval_all(std::span<const std::int32_t> tokens) { return run(tokens, true); }
std::span<const float> Session::logits() const { return state_->logits; }

std::span<const float> Session::run(std::span<const std::int32_t> tokens, bool all_logits) {
  detail::SessionState& s = *state_;
  if (tokens.empty()) throw Error("eval: empty token list (nothing to evaluate)");
  const std::size_t n_past = s.seq.n_tokens();
  if (n_past + tokens.size() > s.n_ctx) {
    throw Error("context full: the session holds " + std::to_string(n_past) + " tokens and " +
                std::to_string(tokens.size()) + " more would exceed its context of " + std::to_string(s.n_ctx) +
                " tokens");
  }
  const std::size_t chunk = s.engine->options().max_step_tokens;
  if (tokens.size() <= chunk) {
    s.engine->step({{this, tokens, all_logits ? Logits::kAll : Logits::kLast}});
    return s.logits;
  }
  // A long input: several passes; only the last asks for logits unless all are wanted.
  std::vector<float> all;
  try {
    for (std::size_t b0 = 0; b0 < tokens.size(); b0 += chunk) {
      const std::size_t nb = std::min(chunk, tokens.size() - b0);
      const bool last = b0 + nb == tokens.size();
      s.engine->step({{this, tokens.subspan(b0, nb),
                       all_logits ? Logits::kAll
                       : last     ? Logits::kLast
                                  : Logits::kNone}});
      if (all_logits) all.insert(all.end(), s.logits.begin(), s.logits.end());
    }
  } catch (...) {
    detail::engine_state(*s.engine).pool.truncate(s.seq.id(), n_past);  // leave the session as it was
    s.logits.clear();
    throw;
  }
  if (all_logits) s.logits = std::move(all);
  return s.logits;
}

Session Session::fork() const {
  const detail::SessionState& s = *state_;
  auto copy = std::make_unique<detail::SessionState>(s.engine, s.seq.fork(), s.n_ctx);
  copy->logits = s.logits;
  return Session(std::move(copy));
}

void Session::truncate(std::size_t n) {
  if (n > n_past()) {
    throw Error("truncate: cannot keep " + std::to_string(n) + " tokens of a session holding " +
                std::to_string(n_past()));
  }
  detail::engine_state(*state_->engine).pool.truncate(state_->seq.id(), n);
}

std::size_t Session::n_past() const { return state_->seq.n_tokens(); }
std::size_t Session::n_ctx() const { return state_->n_ctx; }
std::size_t Session::kv_bytes_held() const {
  return detail::engine_state(*state_->engine).pool.bytes_held(state_->seq.id());
}
std::int64_t Session::n_vocab() const { return state_->engine->model().info().n_vocab; }
const Model& Session::model() const { return state_->engine->model(); }
Engine& Session::engine() const { return *state_->engine; }

}  // namespace wisp
