#include "serve/draft_setup.h"

#include <cstdio>

#include "generate/draft_model.h"
#include "model/model_state.h"
#include "wisp/model.h"

namespace wisp::serve {

DraftSetup load_draft(const std::string& path, const Tokenizer& target, EngineOptions eo, std::size_t kv_tokens) {
  std::shared_ptr<const Model> draft = Model::load(path);
  const Tokenizer draft_tok = Tokenizer::from_gguf(detail::model_state(*draft).file);
  check_same_vocabulary(target.vocab(), draft_tok.vocab(), path);
  eo.kv_tokens = kv_tokens;
  DraftSetup d;
  d.engine = Engine::create(draft, eo);
  char note[512];
  std::snprintf(note, sizeof note, ", draft %s (%s, %.1f MiB of weights; KV pool %zu tokens, %.1f MiB)", path.c_str(),
                draft->info().architecture.c_str(), draft->info().weight_bytes / 1048576.0,
                d.engine->kv_capacity_tokens(), d.engine->kv_bytes() / 1048576.0);
  d.note = note;
  return d;
}

}  // namespace wisp::serve
