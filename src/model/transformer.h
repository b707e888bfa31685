// The forward pass of the decoder-only transformers wisp runs (llama, qwen2/3, gemma2/3, phi3,
// smollm3, olmo2, granite, granitemoe, gpt-oss), written as ops on a Backend. One Transformer per engine: it owns the
// activation buffers of a step, whose tokens may come from many sequences (model/step_batch.h).
// The architectures differ only by the flags of their HParams (model/hparams.h).
//
// Per layer (optional steps in brackets):
//   [h = rmsnorm(x), else h = x (olmo2)] ; q, k, v = h Wq, h Wk, h Wv (+ bias)
//   [rmsnorm of q and k, per head or whole] ; [rope(q, k), not on smollm3's every 4th layer]
//   [q *= q_scale] ; store k, v in the KV cache ; a = attention(q, cache) [scores soft-capped]
//   [a sink logit per head in the softmax (gpt-oss)]
//   o = a Wo ; [o = rmsnorm(o)] ; [o *= residual_scale] ; x += o
//   [h = rmsnorm(x)] ; g = act(h Wgate) * (h Wup) ; o = g Wdown (MoE: the routed experts' sum, moe_ffn.h) ; [o =
//   rmsnorm(o)] ; [o *= residual_scale] ; x += o
// then logits = rmsnorm(x) Wout (+ bias) [* logit_mult] [softcapped].
#pragma once

#include <cstdint>
#include <span>

#include "kv/kv_pool.h"
#include "model/backend.h"
#include "model/model_state.h"
#include "model/moe_ffn.h"

namespace wisp::model {

class Transformer {
 public:
  // Tokens per forward pass at most; longer inputs are split by the caller.
  static constexpr std::int64_t kMaxBatch = 512;

  // n_ctx: the longest a sequence can grow here (the engine's KV pool). It picks LongRoPE's factor
  // set as llama.cpp picks by its context size: the long factors when n_ctx exceeds the original
  // context (HParams::n_ctx_orig), else the short ones (also for 0: passes over a known short text).
  Transformer(const detail::ModelState& model, Backend& backend, KvNumerics numerics, std::int64_t n_ctx = 0);

  // Evaluates one step: tokens[r] is row r of `batch` (its sequence and position there), whose
  // KV slots must already be reserved in pool. Writes the logits of rows logit_rows[i] (in that
  // order) into logits (logit_rows.size() rows of n_vocab floats); no rows skip the output
  // projection. Only those rows go through the output norm and projection.
  void forward(KvPool& pool, const StepBatch& batch, std::span<const std::int32_t> tokens,
               std::span<const std::int64_t> logit_rows, std::span<float> logits);

 private:
  void reserve(std::int64_t n_tok, std::int64_t n_out);
  // The dense FFN's width: n_ff, or the shared expert's beside routed experts (granitemoe).
  std::int64_t dense_ff() const { return hp_.is_moe() && hp_.n_ff_shexp > 0 ? hp_.n_ff_shexp : hp_.n_ff; }
  void layer(KvPool& pool, const StepBatch& batch, std::int64_t il);

  const detail::ModelState& m_;
  const HParams& hp_;
  Backend& be_;
  KvNumerics num_;
  const float* rope_freqs_;  // the frequency factors every layer's rope divides by, or null
  std::int64_t cap_tok_ = 0;
  std::int64_t cap_out_ = 0;
  ActBuffer x_, h_, q_, k_, v_, att_, o_, gate_, up_, logits_;
  ActBuffer shared_;  // granitemoe's shared-expert output (n_embd), beside the routed experts' in o_
  MoeFfn moe_;        // the FFN of MoE architectures
};

}  // namespace wisp::model
