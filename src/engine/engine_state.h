// What an Engine and a Session hold (include/wisp/engine.h, session.h): shared by src/engine's
// files, not part of the public API.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kv/kv_pool.h"
#include "kv/kv_sequence.h"
#include "model/backend.h"
#include "model/step_batch.h"
#include "model/transformer.h"
#include "wisp/engine.h"
#include "wisp/session.h"

namespace wisp::detail {

// The default context of a session and the default size of an engine's pool:
// min(the model's training context, 4096), or `requested` when it is not 0.
inline std::size_t default_context(const Model& m, std::size_t requested) {
  if (requested > 0) return requested;
  const std::int64_t train = m.info().n_ctx_train;
  return train > 0 ? std::min<std::size_t>(static_cast<std::size_t>(train), 4096) : 4096;
}

struct EngineState {
  std::shared_ptr<const Model> model;
  EngineOptions opts;
  KvPool pool;
  std::unique_ptr<model::Backend> backend;
  std::unique_ptr<model::Transformer> transformer;
  // One step's description and outputs, reused from step to step.
  model::StepBatch batch;
  std::vector<std::int32_t> tokens;
  std::vector<std::int64_t> logit_rows;
  std::vector<float> logits;
  std::string device;  // where the forward pass runs (Engine::device)
};

struct SessionState {
  std::shared_ptr<Engine> engine;  // declared before seq: the sequence goes back to the pool first
  KvSequence seq;
  std::size_t n_ctx = 0;
  std::vector<float> logits;  // the rows the last evaluation asked for

  SessionState(std::shared_ptr<Engine> e, KvSequence s, std::size_t ctx)
      : engine(std::move(e)), seq(std::move(s)), n_ctx(ctx) {}
};

// The state behind a public Engine or Session, for wisp's own modules (the engine's step, the
// scheduler, the server's pool metrics, their tests); kept out of include/wisp/ so that a program
// using the library reaches them only through the API (as ModelAccess does for the model).
struct EngineAccess {
  static EngineState& state(const Engine& e) { return *e.state_; }
  static SessionState& state(const Session& s) { return *s.state_; }
};
inline EngineState& engine_state(const Engine& e) { return EngineAccess::state(e); }
inline SessionState& session_state(const Session& s) { return EngineAccess::state(s); }

}  // namespace wisp::detail
