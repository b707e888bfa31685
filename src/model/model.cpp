#include "wisp/model.h"

#include "model/kv_layout_for.h"
#include "model/model_state.h"

namespace wisp {

namespace {

ModelInfo describe(const GgufFile& f, const model::HParams& hp, const model::ModelWeights& w) {
  ModelInfo i;
  i.path = f.path();
  i.architecture = hp.arch_name;
  if (auto name = f.get_string_opt("general.name")) i.name = std::string(*name);
  i.n_vocab = hp.n_vocab;
  i.n_ctx_train = hp.n_ctx_train;
  i.n_embd = hp.n_embd;
  i.n_layer = hp.n_layer;
  i.n_head = hp.n_head;
  i.n_head_kv = hp.n_head_kv;
  i.head_dim = hp.head_dim;
  i.n_ff = hp.n_ff;
  i.sliding_window = hp.n_swa;
  i.tied_embeddings = w.tied_output;
  for (const GgufTensor& t : f.tensors()) i.weight_bytes += t.n_bytes;
  // The pool's own arithmetic (kv_layout.h), for the engine's default cache type: an f32 count
  // here would overstate the cache a session takes by 2x.
  i.kv_bytes_per_token = model::kv_layout_for(hp, 16, KvType::kF16).bytes_per_token();
  return i;
}

}  // namespace

Model::Model(std::unique_ptr<detail::ModelState> state) : state_(std::move(state)) {}
Model::~Model() = default;

std::shared_ptr<const Model> Model::load(const std::string& path) {
  GgufFile file = GgufFile::open(path);
  model::HParams hp = model::read_hparams(file);
  model::ModelWeights weights = model::bind_weights(file, hp);
  ModelInfo info = describe(file, hp, weights);
  auto state = std::make_unique<detail::ModelState>(
      detail::ModelState{std::move(file), std::move(hp), std::move(weights), std::move(info)});
  return std::shared_ptr<const Model>(new Model(std::move(state)));
}

const ModelInfo& Model::info() const { return state_->info; }

}  // namespace wisp
