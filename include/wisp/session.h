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
  // layer. Throws wisp::Error if the memory cannot be allocated.
  KvCache(std::shared_ptr<const Model> model, std::size_t n_tokens, std::uint32_t block_size = 16);
  ~KvCache();
  KvCache(const KvCache&) = delete;
  KvCache& operator=(const KvCache&) = delete;

  std::size_t capacity_tokens() const;
  std::size_t free_tokens() const;  // tokens that fit in the blocks no session holds
  std::size_t bytes() const;

 private:
  friend class Session;
  std::shared_ptr<detail::CacheState> state_;
};

struct SessionOptions {
  // Most tokens this session may hold; 0 means min(the model's training context, 4096).
  std::size_t n_ctx = 0;
  // Threads for the forward pass; 0 means every hardware thread.
  int n_threads = 0;
  // Emulate llama.cpp's default F16 KV cache: K and V are stored rounded to half, and the query
  // and attention probabilities are rounded to half before their products, as ggml's F16 matmuls
  // do. Keeps logits within float noise of llama.cpp; false keeps attention in full f32.
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
  std::int64_t n_vocab() const;
  const Model& model() const;

 private:
  explicit Session(std::unique_ptr<detail::SessionState> state);
  std::span<const float> run(std::span<const std::int32_t> tokens, bool all_logits);
  std::unique_ptr<detail::SessionState> state_;
};

}  // namespace wisp
