// wisp::Model: a GGUF model file opened for inference. The weights stay in the memory-mapped file
// in their stored block types (nothing is copied); loading binds every tensor the architecture
// needs and checks its presence, shape and type, so a bad file fails here with a message that
// names the tensor or key, not later in the middle of a forward pass.
//
// Supported architectures: llama (Llama 2/3, TinyLlama, Mistral, SmolLM2), qwen2, gemma3.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace wisp {

namespace detail {
struct ModelState;
struct ModelAccess;  // src/model/model_state.h: how wisp's own modules reach the bound weights
}  // namespace detail

// The shape of a loaded model, for display and for sizing caches.
struct ModelInfo {
  std::string path;
  std::string architecture;  // "llama", "qwen2", "gemma3"
  std::string name;          // general.name, or "" if absent
  std::int64_t n_vocab = 0;
  std::int64_t n_ctx_train = 0;  // the context length the model was trained for
  std::int64_t n_embd = 0;
  std::int64_t n_layer = 0;
  std::int64_t n_head = 0;
  std::int64_t n_head_kv = 0;
  std::int64_t head_dim = 0;
  std::int64_t n_ff = 0;
  std::int64_t sliding_window = 0;  // 0 when every layer attends to the whole context
  bool tied_embeddings = false;     // the output projection reuses token_embd
  std::uint64_t weight_bytes = 0;   // bytes of tensor data in the file
  // K and V of one token for all layers in the default KV cache (f16, EngineOptions::kv_type):
  // what the engine's pool takes per token unless another cache type is asked for.
  std::uint64_t kv_bytes_per_token = 0;
};

class Model {
 public:
  // Maps and checks `path`. Throws wisp::Error (naming the file and what is wrong) for a file that
  // is not GGUF, an unknown or missing architecture, a missing key, or a tensor that is missing,
  // misshapen or of a type wisp cannot compute with.
  static std::shared_ptr<const Model> load(const std::string& path);

  ~Model();
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelInfo& info() const;

 private:
  friend struct detail::ModelAccess;
  explicit Model(std::unique_ptr<detail::ModelState> state);
  std::unique_ptr<detail::ModelState> state_;
};

}  // namespace wisp
