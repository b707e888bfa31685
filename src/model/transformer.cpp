#include "model/transformer.h"

#include <string>

#include "wisp/error.h"

namespace wisp::model {

Transformer::Transformer(const detail::ModelState& model, Backend& backend, KvNumerics numerics, std::int64_t n_ctx)
    : m_(model),
      hp_(model.hp),
      be_(backend),
      num_(numerics),
      rope_freqs_(model.weights.rope_freqs_long != nullptr && n_ctx > model.hp.n_ctx_orig
                      ? model.weights.rope_freqs_long
                      : model.weights.rope_freqs),
      moe_(model.hp, backend) {}

void Transformer::reserve(std::int64_t n_tok, std::int64_t n_out) {
  if (n_tok > cap_tok_) {
    x_ = be_.alloc(n_tok, hp_.n_embd);
    h_ = be_.alloc(n_tok, hp_.n_embd);
    q_ = be_.alloc(n_tok, hp_.n_embd_q());
    k_ = be_.alloc(n_tok, hp_.n_embd_kv());
    v_ = be_.alloc(n_tok, hp_.n_embd_kv());
    att_ = be_.alloc(n_tok, hp_.n_embd_q());
    o_ = be_.alloc(n_tok, hp_.n_embd);
    gate_ = be_.alloc(n_tok, dense_ff());
    up_ = be_.alloc(n_tok, dense_ff());
    if (hp_.n_ff_shexp > 0) shared_ = be_.alloc(n_tok, hp_.n_embd);
    cap_tok_ = n_tok;
  }
  if (n_out > cap_out_) {
    logits_ = be_.alloc(n_out, hp_.n_vocab);
    cap_out_ = n_out;
  }
}

void Transformer::layer(KvPool& pool, const StepBatch& batch, std::int64_t il) {
  const std::int64_t n = batch.n_tokens();
  const LayerWeights& w = m_.weights.layers[static_cast<std::size_t>(il)];
  const float eps = hp_.rms_eps;
  const Act x = x_.view().rows_from(0, n);
  const Act h = h_.view().rows_from(0, n);
  const Act q = q_.view().rows_from(0, n);
  const Act k = k_.view().rows_from(0, n);
  const Act v = v_.view().rows_from(0, n);
  const Act att = att_.view().rows_from(0, n);
  const Act o = o_.view().rows_from(0, n);
  const Act gate = gate_.view().rows_from(0, n);
  const Act up = up_.view().rows_from(0, n);

  // Attention block (olmo2 has no norm before it: the projections read x itself).
  const Act in = hp_.pre_norms ? h : x;
  if (hp_.pre_norms) be_.rmsnorm(x, w.attn_norm, eps, h);
  const Backend::MatmulTarget qkv[] = {{&w.wq, q, w.bq}, {&w.wk, k, w.bk}, {&w.wv, v, w.bv}};
  be_.matmul_group(in, qkv);
  if (hp_.qk_norm) {
    // Per head (gemma3, qwen3), or over each token's whole q and k rows (olmo2).
    const Act qn = hp_.qk_norm_whole ? q : q.reshape_cols(hp_.head_dim);
    const Act kn = hp_.qk_norm_whole ? k : k.reshape_cols(hp_.head_dim);
    be_.rmsnorm(qn, w.q_norm, eps, qn);
    be_.rmsnorm(kn, w.k_norm, eps, kn);
  }
  const bool swa = hp_.layer_is_swa(il);
  if (hp_.layer_has_rope(il)) {
    kernels::RopeParams rp;
    rp.n_dims = hp_.n_rot;
    rp.style = hp_.rope_style;
    rp.freq_base = swa ? hp_.rope_base_swa : hp_.rope_base;
    rp.freq_scale = swa ? hp_.rope_freq_scale_swa : hp_.rope_freq_scale;
    rp.freq_factors = rope_freqs_;
    // YaRN and the magnitude factor are the global layers' (sliding ones keep plain rope, except
    // on gpt-oss, whose every layer has them).
    if (!swa || hp_.rope_yarn_swa) {
      rp.ext_factor = hp_.rope_ext_factor;
      rp.attn_factor = hp_.rope_attn_factor;
      rp.corr_dims[0] = swa ? hp_.rope_corr_dims_swa[0] : hp_.rope_corr_dims[0];
      rp.corr_dims[1] = swa ? hp_.rope_corr_dims_swa[1] : hp_.rope_corr_dims[1];
    }
    be_.rope(q, hp_.head_dim, batch.positions(), rp);
    be_.rope(k, hp_.head_dim, batch.positions(), rp);
  }
  if (hp_.q_scale != 0.0f) be_.scale(q, hp_.q_scale);

  be_.store_kv(pool, batch, static_cast<std::uint32_t>(il), k, v, num_);
  kernels::AttentionParams ap;
  ap.n_heads = static_cast<int>(hp_.n_head);
  ap.n_kv_heads = static_cast<int>(hp_.n_head_kv);
  ap.kq_scale = hp_.kq_scale;
  ap.window = swa ? hp_.n_swa : 0;
  ap.logit_softcap = hp_.attn_softcap;
  ap.sinks = w.attn_sinks;
  ap.round_f16 = num_.round_f16;
  ap.batch_invariant = num_.batch_invariant;
  be_.attention(pool, batch, static_cast<std::uint32_t>(il), q, ap, att);
  be_.matmul(w.wo, att, o, w.bo);
  if (hp_.post_norms) be_.rmsnorm(o, w.post_attn_norm, eps, o);
  if (hp_.residual_scale != 0.0f) be_.scale(o, hp_.residual_scale);
  be_.add(o, x);

  // Feed-forward block.
  const Act ffn_in = hp_.pre_norms ? h : x;
  if (hp_.pre_norms) be_.rmsnorm(x, w.ffn_norm, eps, h);
  if (hp_.is_moe()) moe_.forward(w, ffn_in, o);
  if (!hp_.is_moe() || hp_.n_ff_shexp > 0) {
    // The dense FFN, or granitemoe's shared expert beside the routed ones (added to their sum).
    const Act dense = hp_.is_moe() ? shared_.view().rows_from(0, n) : o;
    const Backend::MatmulTarget gate_up[] = {{&w.gate, gate, nullptr}, {&w.up, up, nullptr}};
    be_.matmul_group(ffn_in, gate_up);
    be_.glu(hp_.ffn_act, gate, up, gate);
    be_.matmul(w.down, gate, dense);
    if (hp_.is_moe()) be_.add(dense, o);
  }
  if (hp_.post_norms) be_.rmsnorm(o, w.post_ffn_norm, eps, o);
  if (hp_.residual_scale != 0.0f) be_.scale(o, hp_.residual_scale);
  be_.add(o, x);
}

void Transformer::forward(KvPool& pool, const StepBatch& batch, std::span<const std::int32_t> tokens,
                          std::span<const std::int64_t> logit_rows, std::span<float> logits) {
  const std::int64_t n = batch.n_tokens();
  if (n <= 0 || n > kMaxBatch) {
    throw Error("forward: batch of " + std::to_string(n) + " tokens (1 to " + std::to_string(kMaxBatch) + " allowed)");
  }
  if (static_cast<std::int64_t>(tokens.size()) != n) {
    throw Error("forward: " + std::to_string(tokens.size()) + " token ids for a batch of " + std::to_string(n) +
                " rows");
  }
  const auto n_out = static_cast<std::int64_t>(logit_rows.size());
  if (static_cast<std::int64_t>(logits.size()) != n_out * hp_.n_vocab) {
    throw Error("forward: logits buffer of " + std::to_string(logits.size()) + " floats, expected " +
                std::to_string(n_out * hp_.n_vocab));
  }
  bool trailing = true;  // the wanted rows are the batch's last n_out, in order: no gather needed
  for (std::int64_t i = 0; i < n_out; ++i) {
    const std::int64_t r = logit_rows[static_cast<std::size_t>(i)];
    if (r < 0 || r >= n) throw Error("forward: logits asked for row " + std::to_string(r) + " of " + std::to_string(n));
    trailing = trailing && r == n - n_out + i;
  }
  reserve(n, n_out);

  const Act x = x_.view().rows_from(0, n);
  be_.embed(m_.weights.tok_embd, tokens, x);
  if (hp_.embed_scale != 0.0f) be_.scale(x, hp_.embed_scale);
  for (std::int64_t il = 0; il < hp_.n_layer; ++il) layer(pool, batch, il);
  if (n_out == 0) return;

  // Only the rows whose logits are wanted go through the output norm and projection.
  Act xo = x.rows_from(n - n_out, n_out);
  if (!trailing) {
    xo = o_.view().rows_from(0, n_out);
    be_.gather_rows(x, logit_rows, xo);
  }
  const Act ho = h_.view().rows_from(0, n_out);
  const Act out = logits_.view().rows_from(0, n_out);
  be_.rmsnorm(xo, m_.weights.output_norm, hp_.rms_eps, ho);
  be_.matmul(m_.weights.output, ho, out, m_.weights.output_bias);
  if (hp_.logit_mult != 0.0f) be_.scale(out, hp_.logit_mult);
  if (hp_.final_logit_softcap != 0.0f) be_.softcap(out, hp_.final_logit_softcap);
  for (std::int64_t r = 0; r < n_out; ++r) {
    be_.read_row(out, r,
                 logits.subspan(static_cast<std::size_t>(r * hp_.n_vocab), static_cast<std::size_t>(hp_.n_vocab)));
  }
}

}  // namespace wisp::model
