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

}  // namespace wisp::detail
