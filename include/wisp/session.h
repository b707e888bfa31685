// wisp::Session: one token sequence being evaluated by a model: its KV cache entries, its position,
// and the logits of its last evaluation.
//
// Sessions keep their keys and values in a KvCache: a pool of fixed-size blocks that several
// sessions can share (a server's requests, a chat and its forks). A session grows block by block;
// fork() makes a new session that shares the prefix blocks (copy-on-write at the first new token).
//
//   auto model = wisp::Model::load("model.gguf");
//   wisp::Session s(model, {.n_ctx = 2048, .n_threads = 4});
//   std::span<const float> logits = s.eval(prompt_ids);   // prefill: one batched pass
//   logits = s.eval(std::vector<std::int32_t>{next_id});  // decode
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "wisp/model.h"

namespace wisp {

namespace detail {
struct CacheState;
struct SessionState;
}  // namespace detail

// A KV cache shared by the sessions of one model.
class KvCache {
 public:
  // Room for n_tokens tokens in total (rounded up to whole blocks of block_size tokens), for every
  // layer (sliding-window layers included: each layer keeps every position), K and V stored as
  // kv_type ("f16", "f32", "q8_0", "q4"; see SessionOptions::kv_type). Throws wisp::Error if the
  // memory cannot be allocated or the type is unknown.
  KvCache(std::shared_ptr<const Model> model, std::size_t n_tokens, std::uint32_t block_size = 16,
          std::string_view kv_type = "f16");
  ~KvCache();
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  std::size_t capacity_tokens() const;
  std::size_t free_tokens() const;  // tokens that fit in the blocks no session holds
  std::size_t bytes() const;
  std::string_view kv_type() const;  // "f16", "f32", "q8_0" or "q4"

 private:
  friend class Session;
  std::shared_ptr<detail::CacheState> state_;
};

struct SessionOptions {
  // Most tokens this session may hold; 0 means min(the model's training context, 4096).
  std::size_t n_ctx = 0;
  // Threads for the forward pass; 0 means every hardware thread.
  int n_threads = 0;
  // How K and V are stored in the session's own cache (a shared KvCache has its own type, which
  // must be the same): "f16" (llama.cpp's default: IEEE half), "f32", "q8_0" (GGML's Q8_0 block,
  // 8.5 bits per value) or "q4" (4-bit codes with an f16 scale and zero-point per 32 values, 5 bits
  // per value). Attention decodes the rows as it reads them. Unknown names throw wisp::Error.
  std::string kv_type = "f16";
  // Round the query and the attention probabilities to half before their products, as ggml's F16
  // matmuls do (with the default f16 cache this gives llama.cpp's logits bit for bit). With
  // kv_type "f32", false keeps attention in full f32.
  bool kv_f16_rounding = true;
};

class Session {
 public:
  // A session with a KvCache of its own, sized for opts.n_ctx tokens.
  explicit Session(std::shared_ptr<const Model> model, const SessionOptions& opts = {});
  // A session in a shared cache (which must have been made for the same model).
  Session(std::shared_ptr<const Model> model, std::shared_ptr<KvCache> cache, const SessionOptions& opts = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  // Appends `tokens` at the end of the sequence and returns the logits after the last of them
  // (n_vocab values, valid until the next call). The prompt is evaluated as one batch.
  // Throws wisp::Error, leaving the session as it was, for an empty list, a token id outside the
  // vocabulary, a context overflow ("context full") or an exhausted shared cache.
  std::span<const float> eval(std::span<const std::int32_t> tokens);
  // As eval, but returns the logits after every token: tokens.size() rows of n_vocab values.
  std::span<const float> eval_all(std::span<const std::int32_t> tokens);

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

 private:
  explicit Session(std::unique_ptr<detail::SessionState> state);
  std::span<const float> run(std::span<const std::int32_t> tokens, bool all_logits);
  std::unique_ptr<detail::SessionState> state_;
};

}  // namespace wisp
