// What a loaded wisp::Model holds: the mapped file, its hyper-parameters and the weight views
// into it. Shared read-only by every session of the model.
#pragma once

#include "formats/gguf_file.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "wisp/model.h"

namespace wisp::detail {

struct ModelState {
  GgufFile file;  // owns the mapping every weight view points into
  model::HParams hp;
  model::ModelWeights weights;
  ModelInfo info;
};

// The weights behind a public wisp::Model, for wisp's own modules (engine, tools, server); kept out
// of include/wisp/ so that a program using the library sees only the model's info.
struct ModelAccess {
  static const ModelState& state(const Model& m) { return *m.state_; }
};
inline const ModelState& model_state(const Model& m) { return ModelAccess::state(m); }

}  // namespace wisp::detail
