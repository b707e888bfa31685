// wisp::Engine: one per loaded model. It owns the thread pool, the compute backend and the paged
// KV pool that every sequence of the model shares; Sessions (include/wisp/session.h) are light
// handles on it (a block table and a logits buffer: 64 live sessions add no threads and no pool).
//
// A step evaluates tokens of several sessions in one forward pass: every weight matmul runs once
// over all of the step's tokens, so the weights are read once per step whatever the batch; RoPE,
// KV writes and attention are per token over its own sequence; logits are computed only for the
// rows asked for.
//
// Batch invariance: by default (exact = false) a session's logits are bit for bit the same
// whether it runs alone or batched with any other sessions at any step boundaries, chunked
// prompts included. Every per-token computation reads only that token's own row: activations are
// quantized per row, every matmul uses the one-token float order for every token (never an order
// picked by the batch size or the token's place in it), attention uses the one-token order for
// every query over the token's own cache, and norms, RoPE and the GLU are row-wise. Threads split
// outputs, never one output's sum. With exact = true the matmuls and attention follow ggml's
// batch-dependent choices, so a single sequence's logits equal llama.cpp's, but a token's results
// then depend on what it is batched with.
//
//   auto model = wisp::Model::load("model.gguf");
//   auto engine = wisp::Engine::create(model, {.n_threads = 4, .kv_tokens = 8192});
//   wisp::Session a(engine), b(engine);
//   a.eval(prompt_a);  b.eval(prompt_b);             // one sequence per pass
//   engine->step({{&a, next_a}, {&b, next_b}});      // both sequences in one pass
//   std::span<const float> la = a.logits(), lb = b.logits();
//
// Not thread-safe: calls on an engine and its sessions must come from one thread at a time (the
// scheduler and the server serialize them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "wisp/model.h"

namespace wisp {

class Session;

namespace detail {
struct EngineState;
struct EngineAccess;  // src/engine/engine_state.h: how wisp's own modules reach the state
}  // namespace detail

struct EngineOptions {
  // Threads for the forward pass; 0 means every hardware thread.
  int n_threads = 0;
  // Room in the shared KV pool, in tokens (rounded up to whole blocks); 0 means
  // min(the model's training context, 4096).
  std::size_t kv_tokens = 0;
  std::uint32_t block_size = 16;  // tokens per KV block
  // How K and V are stored: "f16" (llama.cpp's default: IEEE half), "f32", "q8_0" (GGML's Q8_0
  // block, 8.5 bits per value) or "q4" (4-bit codes with an f16 scale and zero-point per 32
  // values, 5 bits per value). Attention decodes the rows as it reads them.
  std::string kv_type = "f16";
  // Round the query and the attention probabilities to half before their products, as ggml's F16
  // matmuls do. With kv_type "f32", false keeps attention in full f32.
  bool kv_f16_rounding = true;
  // llama.cpp's batch-dependent float orders (see above): logits equal llama.cpp's for one
  // sequence; not batch-invariant.
  bool exact = false;
  // Which x86 build of llama.cpp `exact` reproduces: "auto" (the one llama.cpp builds for this
  // CPU: "avx512" where it has AVX-512F, else "avx2"), "avx512" or "avx2". ggml's float sums and
  // exp differ between the two builds in the last bits (src/kernels/ggml_order.h).
  std::string exact_isa = "auto";
  // Tokens per forward pass at most (1 to 512); Session::eval splits longer inputs.
  std::size_t max_step_tokens = 512;
  // Commit the KV pool's memory at creation (write it once) instead of page by page as sequences
  // first fill it: what a server wants, whose prefix cache eventually touches every block — its
  // footprint is then fixed from the start, and a machine short of memory fails at start, not
  // under load.
  bool kv_resident = false;
  // Where the forward pass runs: "cpu", "cuda" (device 0) or "cuda:N" in a build with
  // -DWISP_CUDA=ON; "auto" picks the first CUDA device when the build has CUDA and the machine a
  // device, else the CPU. Engine::device() says which was chosen.
  std::string device = "auto";
};

// Which logits a step entry wants.
enum class Logits { kNone, kLast, kAll };

// One session's part of a step: its new tokens (appended at its end) and the logits it wants.
struct StepEntry {
  Session* session = nullptr;
  std::span<const std::int32_t> tokens;
  Logits logits = Logits::kLast;
};

class Engine {
 public:
  // Throws wisp::Error for a null model, an unknown kv_type, a pool that cannot be allocated, or
  // max_step_tokens outside 1..512.
  static std::shared_ptr<Engine> create(std::shared_ptr<const Model> model, const EngineOptions& opts = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Evaluates every entry's tokens in one forward pass (at most max_step_tokens in total; each
  // session at most once). Each session's logits() then holds the rows it asked for. All or
  // nothing: on any error (an empty entry, a token outside the vocabulary, a session over its
  // context, an exhausted KV pool) wisp::Error is thrown and every session is left as it was.
  void step(std::span<const StepEntry> entries);
  void step(std::initializer_list<StepEntry> entries) { step(std::span(entries.begin(), entries.size())); }

  const Model& model() const;
  std::shared_ptr<const Model> model_ptr() const;
  const EngineOptions& options() const;  // as given, with 0s resolved (threads, kv_tokens)
  int n_threads() const;

  // The shared KV pool.
  std::size_t kv_capacity_tokens() const;
  std::size_t kv_free_tokens() const;  // in blocks no sequence holds (cached prefix blocks included)
  std::size_t kv_bytes() const;
  std::size_t kv_bytes_per_token() const;
  std::string_view kv_type() const;  // "f16", "f32", "q8_0" or "q4"
  std::uint32_t block_size() const;
  // The device the forward pass runs on: "cpu" or "cuda:N (NAME)".
  const std::string& device() const;

 private:
  friend struct detail::EngineAccess;
  explicit Engine(std::unique_ptr<detail::EngineState> state);
  std::unique_ptr<detail::EngineState> state_;
};

}  // namespace wisp
