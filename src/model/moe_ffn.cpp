#include "model/moe_ffn.h"

#include <algorithm>
#include <numeric>

#include "kernels/activations.h"

namespace wisp::model {

void MoeFfn::reserve(std::int64_t n_tok) {
  if (n_tok <= cap_) return;
  const std::int64_t slots = n_tok * hp_.n_expert_used;
  logits_ = be_.alloc(n_tok, hp_.n_expert);
  x_ = be_.alloc(slots, hp_.n_embd);
  gate_ = be_.alloc(slots, hp_.n_ff_exp);
  up_ = be_.alloc(slots, hp_.n_ff_exp);
  y_ = be_.alloc(slots, hp_.n_embd);
  cap_ = n_tok;
}

void MoeFfn::route(Act logits, std::int64_t n) {
  const std::int64_t n_exp = hp_.n_expert;
  const std::int64_t k = hp_.n_expert_used;
  row_.resize(static_cast<std::size_t>(n_exp));
  chosen_.resize(static_cast<std::size_t>(n * k));
  weights_.resize(static_cast<std::size_t>(n * k));
  std::vector<std::int32_t> idx(static_cast<std::size_t>(n_exp));
  for (std::int64_t t = 0; t < n; ++t) {
    be_.read_row(logits, t, row_);
    // gpt-oss picks by the raw logits and soft-maxes only the chosen ones (below).
    if (!hp_.expert_softmax_chosen) kernels::softmax(row_.data(), n_exp, be_.ggml_isa());
    // Largest first; equal probabilities keep the lower expert id first.
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](std::int32_t a, std::int32_t b) { return row_[a] > row_[b]; });
    std::int32_t* ch = chosen_.data() + t * k;
    float* wt = weights_.data() + t * k;
    double sum = 0.0;  // ggml_sum_rows accumulates in double
    for (std::int64_t s = 0; s < k; ++s) {
      ch[s] = idx[static_cast<std::size_t>(s)];
      wt[s] = row_[static_cast<std::size_t>(ch[s])];
      sum += static_cast<double>(wt[s]);
    }
    if (hp_.expert_softmax_chosen) kernels::softmax(wt, k, be_.ggml_isa());
    if (hp_.expert_weights_norm) {
      // Clamped to the smallest normal half, as llama.cpp does against a zero sum.
      const float total = std::max(static_cast<float>(sum), 6.103515625e-5f);
      for (std::int64_t s = 0; s < k; ++s) wt[s] = wt[s] / total;
    }
    if (hp_.expert_weights_scale != 0.0f && hp_.expert_weights_scale != 1.0f) {
      for (std::int64_t s = 0; s < k; ++s) wt[s] *= hp_.expert_weights_scale;
    }
  }
}

void MoeFfn::forward(const LayerWeights& w, Act in, Act out) {
  const std::int64_t n = in.rows;
  const std::int64_t k = hp_.n_expert_used;
  reserve(n);
  const Act logits = logits_.view().rows_from(0, n);
  be_.matmul(w.gate_inp, in, logits, w.gate_inp_b);
  route(logits, n);

  // Each (token, slot) gets a row of the expert-major buffers: expert e's tokens are rows
  // [offset[e], offset[e] + count[e]), in token order.
  count_.assign(static_cast<std::size_t>(hp_.n_expert), 0);
  for (const std::int32_t e : chosen_) ++count_[static_cast<std::size_t>(e)];
  offset_.assign(static_cast<std::size_t>(hp_.n_expert), 0);
  for (std::size_t e = 1; e < offset_.size(); ++e) offset_[e] = offset_[e - 1] + count_[e - 1];
  src_rows_.resize(static_cast<std::size_t>(n * k));
  slot_rows_.resize(static_cast<std::size_t>(n * k));
  std::vector<std::int64_t> fill = offset_;
  for (std::int64_t t = 0; t < n; ++t) {
    for (std::int64_t s = 0; s < k; ++s) {
      const auto e = static_cast<std::size_t>(chosen_[static_cast<std::size_t>(t * k + s)]);
      const std::int64_t r = fill[e]++;
      src_rows_[static_cast<std::size_t>(r)] = t;
      slot_rows_[static_cast<std::size_t>(t * k + s)] = r;
    }
  }
  const Act x = x_.view().rows_from(0, n * k);
  be_.gather_rows(in, src_rows_, x);

  for (std::int64_t e = 0; e < hp_.n_expert; ++e) {
    const std::int64_t m = count_[static_cast<std::size_t>(e)];
    if (m == 0) continue;  // an expert no token chose is never read
    const std::int64_t r0 = offset_[static_cast<std::size_t>(e)];
    const kernels::MatrixView g = rows_of(w.gate_exps, e * hp_.n_ff_exp, hp_.n_ff_exp);
    const kernels::MatrixView u = rows_of(w.up_exps, e * hp_.n_ff_exp, hp_.n_ff_exp);
    const kernels::MatrixView d = rows_of(w.down_exps, e * hp_.n_embd, hp_.n_embd);
    const Act xe = x.rows_from(r0, m);
    const Act ge = gate_.view().rows_from(r0, m);
    const Act ue = up_.view().rows_from(r0, m);
    // Expert e's biases (gpt-oss), added after its product as ggml_add_id does.
    const float* gb = w.gate_exps_b ? w.gate_exps_b + e * hp_.n_ff_exp : nullptr;
    const float* ub = w.up_exps_b ? w.up_exps_b + e * hp_.n_ff_exp : nullptr;
    const float* db = w.down_exps_b ? w.down_exps_b + e * hp_.n_embd : nullptr;
    const Backend::MatmulTarget gate_up[] = {{&g, ge, gb}, {&u, ue, ub}};
    be_.matmul_group(xe, gate_up);
    be_.glu(hp_.expert_act, ge, ue, ge);
    be_.matmul(d, ge, y_.view().rows_from(r0, m), db);
  }
  be_.weighted_sum_rows(y_.view().rows_from(0, n * k), slot_rows_, weights_, k, out);
}

}  // namespace wisp::model
