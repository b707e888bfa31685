#include "wisp/session.h"

#include <algorithm>
#include <string>
#include <vector>

#include "kv/kv_sequence.h"
#include "model/cpu_backend.h"
#include "model/kv_layout_for.h"
#include "model/model_state.h"
#include "model/transformer.h"
#include "wisp/error.h"

namespace wisp {

namespace detail {

struct CacheState {
  std::shared_ptr<const Model> model;  // the cache's shape is this model's
  KvPool pool;
};

struct SessionState {
  std::shared_ptr<const Model> model;
  std::shared_ptr<CacheState> cache;  // declared before seq: the sequence goes back to the pool first
  KvSequence seq;
  SessionOptions opts;
  std::size_t n_ctx = 0;
  std::unique_ptr<model::Backend> backend;
  std::unique_ptr<model::Transformer> transformer;
  std::vector<float> logits;

  SessionState(std::shared_ptr<const Model> m, std::shared_ptr<CacheState> c, KvSequence s, const SessionOptions& o,
               std::size_t ctx)
      : model(std::move(m)), cache(std::move(c)), seq(std::move(s)), opts(o), n_ctx(ctx),
        backend(model::make_cpu_backend(o.n_threads)),
        transformer(std::make_unique<model::Transformer>(model->state(), *backend,
                                                         model::KvNumerics{o.kv_f16_rounding})) {}
};

}  // namespace detail

namespace {

std::size_t default_ctx(const Model& m, std::size_t requested) {
  if (requested > 0) return requested;
  const std::int64_t train = m.info().n_ctx_train;
  return train > 0 ? std::min<std::size_t>(static_cast<std::size_t>(train), 4096) : 4096;
}

std::shared_ptr<detail::CacheState> make_cache(std::shared_ptr<const Model> model, std::size_t n_tokens,
                                               std::uint32_t block_size, std::string_view kv_type) {
  if (!model) throw Error("KV cache: no model given");
  if (n_tokens == 0) throw Error("KV cache: the cache needs room for at least 1 token");
  if (block_size == 0) throw Error("KV cache: block size must be at least 1 token");
  const std::size_t n_blocks = (n_tokens + block_size - 1) / block_size;
  if (n_blocks > 0xffffffffu) throw Error("KV cache: " + std::to_string(n_tokens) + " tokens is too many");
  const KvLayout layout = model::kv_layout_for(*model, block_size, kv_type_from_name(kv_type));
  return std::make_shared<detail::CacheState>(
      detail::CacheState{std::move(model), KvPool(layout, static_cast<std::uint32_t>(n_blocks))});
}

}  // namespace

// ---- KvCache ----

KvCache::KvCache(std::shared_ptr<const Model> model, std::size_t n_tokens, std::uint32_t block_size,
                 std::string_view kv_type)
    : state_(make_cache(std::move(model), n_tokens, block_size, kv_type)) {}
KvCache::~KvCache() = default;

std::size_t KvCache::capacity_tokens() const {
  return std::size_t{state_->pool.allocator().n_blocks()} * state_->pool.layout().block_size;
}
std::size_t KvCache::free_tokens() const {
  return std::size_t{state_->pool.allocator().n_free()} * state_->pool.layout().block_size;
}
std::size_t KvCache::bytes() const { return state_->pool.bytes_total(); }
std::string_view KvCache::kv_type() const { return kv_type_name(state_->pool.layout().type); }

// ---- Session ----

Session::Session(std::unique_ptr<detail::SessionState> state) : state_(std::move(state)) {}

Session::Session(std::shared_ptr<const Model> model, const SessionOptions& opts) {
  if (!model) throw Error("session: no model given");
  const std::size_t ctx = default_ctx(*model, opts.n_ctx);
  auto cache = make_cache(model, ctx, BlockAllocator::kDefaultBlockSize, opts.kv_type);
  KvSequence seq(cache->pool);
  state_ = std::make_unique<detail::SessionState>(std::move(model), std::move(cache), std::move(seq), opts, ctx);
}

Session::Session(std::shared_ptr<const Model> model, std::shared_ptr<KvCache> cache, const SessionOptions& opts) {
  if (!model) throw Error("session: no model given");
  if (!cache) throw Error("session: no KV cache given");
  if (cache->state_->model.get() != model.get()) {
    throw Error("session: the KV cache was made for another model (" + cache->state_->model->info().path + ")");
  }
  const KvType cache_type = cache->state_->pool.layout().type;
  if (kv_type_from_name(opts.kv_type) != cache_type) {
    throw Error("session: kv_type " + opts.kv_type + " asked for, but the shared KV cache stores " +
                std::string(kv_type_name(cache_type)) + "; give the session the cache's type");
  }
  const std::size_t ctx = default_ctx(*model, opts.n_ctx);
  KvSequence seq(cache->state_->pool);
  state_ = std::make_unique<detail::SessionState>(std::move(model), cache->state_, std::move(seq), opts, ctx);
}

Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

std::span<const float> Session::eval(std::span<const std::int32_t> tokens) { return run(tokens, false); }
std::span<const float> Session::eval_all(std::span<const std::int32_t> tokens) { return run(tokens, true); }

std::span<const float> Session::run(std::span<const std::int32_t> tokens, bool all_logits) {
  detail::SessionState& s = *state_;
  const std::int64_t n_vocab = s.model->info().n_vocab;
  if (tokens.empty()) throw Error("eval: empty token list (nothing to evaluate)");
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= n_vocab) {
      throw Error("eval: token " + std::to_string(i) + " has id " + std::to_string(tokens[i]) +
                  ", outside the vocabulary [0, " + std::to_string(n_vocab) + ")");
    }
  }
  const std::size_t n_past = s.seq.n_tokens();
  if (n_past + tokens.size() > s.n_ctx) {
    throw Error("context full: the session holds " + std::to_string(n_past) + " tokens and " +
                std::to_string(tokens.size()) + " more would exceed its context of " + std::to_string(s.n_ctx) +
                " tokens");
  }

  KvPool& pool = s.cache->pool;
  pool.append(s.seq.id(), tokens.size());  // all or nothing; throws when the shared cache is full
  const auto n = static_cast<std::int64_t>(tokens.size());
  s.logits.resize(static_cast<std::size_t>((all_logits ? n : 1) * n_vocab));
  try {
    for (std::int64_t b0 = 0; b0 < n; b0 += model::Transformer::kMaxBatch) {
      const std::int64_t nb = std::min(model::Transformer::kMaxBatch, n - b0);
      const bool last = b0 + nb == n;
      std::span<float> out;
      if (all_logits) {
        out = std::span<float>(s.logits).subspan(static_cast<std::size_t>(b0 * n_vocab),
                                                 static_cast<std::size_t>(nb * n_vocab));
      } else if (last) {
        out = s.logits;
      }
      s.transformer->forward(pool, s.seq.id(), tokens.subspan(static_cast<std::size_t>(b0), static_cast<std::size_t>(nb)),
                             static_cast<std::int64_t>(n_past) + b0, all_logits, out);
    }
  } catch (...) {
    pool.truncate(s.seq.id(), n_past);  // leave the session as it was
    throw;
  }
  return s.logits;
}

Session Session::fork() const {
  const detail::SessionState& s = *state_;
  return Session(std::make_unique<detail::SessionState>(s.model, s.cache, s.seq.fork(), s.opts, s.n_ctx));
}

void Session::truncate(std::size_t n) {
  if (n > n_past()) {
    throw Error("truncate: cannot keep " + std::to_string(n) + " tokens of a session holding " +
                std::to_string(n_past()));
  }
  state_->cache->pool.truncate(state_->seq.id(), n);
}

std::size_t Session::n_past() const { return state_->seq.n_tokens(); }
std::size_t Session::n_ctx() const { return state_->n_ctx; }
std::size_t Session::kv_bytes_held() const { return state_->cache->pool.bytes_held(state_->seq.id()); }
std::int64_t Session::n_vocab() const { return state_->model->info().n_vocab; }
const Model& Session::model() const { return *state_->model; }

}  // namespace wisp
