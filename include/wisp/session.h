// wisp::Session: one token sequence of an Engine (include/wisp/engine.h): its block table in the
// engine's shared paged KV pool, its position, and the logits of its last evaluation. A handle:
// no threads, no pool, no buffers beyond its logits.
//
// A session grows block by block; fork() makes a new session that shares the prefix blocks
// (copy-on-write at the first new token).
//
//   auto model = wisp::Model::load("model.gguf");
//   auto engine = wisp::Engine::create(model, {.n_threads = 4});
//   wisp::Session s(engine);
//   std::span<const float> logits = s.eval(prompt_ids);   // prefill: batched passes
//   logits = s.eval(std::vector<std::int32_t>{next_id});  // decode
//
// Session(model, options) is the one-sequence shorthand: it makes an engine of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wisp/engine.h"
#include "wisp/model.h"

namespace wisp {

namespace detail {
struct SessionState;
struct EngineAccess;  // src/engine/engine_state.h: how wisp's own modules reach the state
}  // namespace detail

struct SessionOptions {
  // Most tokens this session may hold; 0 means min(the model's training context, 4096).
  std::size_t n_ctx = 0;
  // Only for Session(model, options), which makes an engine of its own with a pool of n_ctx
  // tokens: its threads, KV type, rounding and numerics (see EngineOptions).
  int n_threads = 0;
  std::string kv_type = "f16";
  bool kv_f16_rounding = true;
  bool exact = false;
  std::string exact_isa = "auto";  // EngineOptions::exact_isa
  std::string device = "auto";     // EngineOptions::device
};

class Session {
 public:
  // A session of `engine` (its pool, threads and numerics); opts.n_ctx bounds its length.
  explicit Session(std::shared_ptr<Engine> engine, const SessionOptions& opts = {});
  // A session with an engine of its own, sized for opts.n_ctx tokens.
  explicit Session(std::shared_ptr<const Model> model, const SessionOptions& opts = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Appends `tokens` at the end of the sequence and returns the logits after the last of them
  // (n_vocab values, valid until the next call). Inputs longer than the engine's step are
  // evaluated in several passes. Throws wisp::Error, leaving the session as it was, for an empty
  // list, a token id outside the vocabulary, a context overflow ("context full") or an exhausted
  // KV pool.
  std::span<const float> eval(std::span<const std::int32_t> tokens);
  // As eval, but returns the logits after every token: tokens.size() rows of n_vocab values.
  std::span<const float> eval_all(std::span<const std::int32_t> tokens);
  // The logits of the last evaluation (eval, eval_all or an Engine::step): the rows it asked
  // for, n_vocab values each; empty before the first.
  std::span<const float> logits() const;

  // A new session continuing from this one's tokens, sharing their cache blocks.
  Session fork() const;
  // Forgets every token after the first n (n <= n_past()).
  void truncate(std::size_t n);

  std::size_t n_past() const;  // tokens in the sequence
  std::size_t n_ctx() const;
  // Bytes of the KV cache blocks this session's sequence holds (whole blocks; shared ones count).
  std::size_t kv_bytes_held() const;
  std::int64_t n_vocab() const;
  const Model& model() const;
  Engine& engine() const;

 private:
  friend struct detail::EngineAccess;
  explicit Session(std::unique_ptr<detail::SessionState> state);
  std::span<const float> run(std::span<const std::int32_t> tokens, bool all_logits);
  std::unique_ptr<detail::SessionState> state_;
};

}  // namespace wisp
