// Tokenizer::from_model: the public way to a model's tokenizer (the GGUF file behind a Model is
// internal, so library users cannot call from_gguf themselves).
#include "model/model_state.h"
#include "tokenizer/tokenizer.h"

namespace wisp {

Tokenizer Tokenizer::from_model(const Model& model) { return from_gguf(detail::model_state(model).file); }

}  // namespace wisp
