// The mixture-of-experts FFN (qwen3moe, Mixtral-style llama) as llama.cpp's build_moe_ffn
// computes it with a softmax router:
//   p = softmax(h W_gate_inp) ; the n_expert_used largest p, largest first ; w = p / sum(p)
//   [* expert_weights_scale] ; for each chosen expert e: y_e = (silu(h G_e) * (h U_e)) D_e ;
//   out = w_0 y_0 + w_1 y_1 + ... (in that order: the float sum llama.cpp forms).
// gpt-oss instead adds the router's bias, takes the n_expert_used largest logits and soft-maxes
// those into w (no renormalization), adds each expert's biases after its products and uses the
// clamped SwiGLU (HParams::expert_softmax_chosen, expert_biases, expert_act).
// The routing runs on the host (n_expert floats per token). Each expert then multiplies only the
// rows of the tokens routed to it, so a step reads only the chosen experts' weights: decode reads
// the active parameters, not all of them.
#pragma once

#include <cstdint>
#include <vector>

#include "model/backend.h"
#include "model/hparams.h"
#include "model/weights.h"

namespace wisp::model {

class MoeFfn {
 public:
  MoeFfn(const HParams& hp, Backend& backend) : hp_(hp), be_(backend) {}

  // out row t = the experts' weighted sum for row t of in.
  void forward(const LayerWeights& w, Act in, Act out);

  // The experts each token of the last forward() chose, n_expert_used per token, best first.
  const std::vector<std::int32_t>& last_choices() const { return chosen_; }

 private:
  void reserve(std::int64_t n_tok);
  void route(Act logits, std::int64_t n);

  const HParams& hp_;
  Backend& be_;
  std::int64_t cap_ = 0;
  ActBuffer logits_, x_, gate_, up_, y_;
  std::vector<float> row_;
  std::vector<std::int32_t> chosen_;  // [token][slot] expert ids
  std::vector<float> weights_;        // [token][slot]
  std::vector<std::int64_t> count_, offset_;
  std::vector<std::int64_t> src_rows_;   // row of x_ (expert-major) -> token
  std::vector<std::int64_t> slot_rows_;  // [token][slot] -> row of y_
};

}  // namespace wisp::model
