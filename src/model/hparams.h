// The hyper-parameters of a transformer, read from a GGUF file's metadata under the
// "<architecture>." keys, with each architecture's conventions (as llama.cpp applies them) made
// explicit as flags so the forward pass is one piece of code for every supported architecture.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/gguf_file.h"
#include "kernels/rope.h"

namespace wisp::model {

enum class Arch : std::uint8_t {
  kLlama,  // also Mistral, and Mixtral-style MoE (llama.expert_count > 0)
  kQwen2,
  kQwen3,
  kQwen3Moe,
  kGemma2,
  kGemma3,
  kPhi3,
  kSmolLM3,
  kOlmo2,
  kGranite,
  kGraniteMoe,  // "granitemoe": granite's multipliers, Mixtral-style experts, optionally a shared expert
  kGptOss,      // "gpt-oss"
};

// The architectures wisp runs, by their general.architecture names, for messages ("llama, qwen2, ...").
std::string supported_architectures();
// kSwigluOai: gpt-oss's experts, min(g, 7) * sigmoid(1.702 min(g, 7)) * (clamp(u, -7, 7) + 1) (kernels/activations.h).
enum class FfnAct : std::uint8_t { kSilu, kGeluTanh, kSwigluOai };

struct HParams {
  Arch arch = Arch::kLlama;
  std::string arch_name;  // as the file spells it

  std::int64_t n_vocab = 0;
  std::int64_t n_ctx_train = 0;
  std::int64_t n_embd = 0;
  std::int64_t n_layer = 0;
  std::int64_t n_ff = 0;
  std::int64_t n_head = 0;
  std::int64_t n_head_kv = 0;
  std::int64_t head_dim = 0;  // key and value head size (wisp requires them equal)
  float rms_eps = 1e-5f;

  // Rope: global layers use rope_base/rope_freq_scale; sliding-window layers their own pair.
  kernels::RopeStyle rope_style = kernels::RopeStyle::kNormal;
  int n_rot = 0;
  float rope_base = 10000.0f;
  float rope_freq_scale = 1.0f;
  float rope_ext_factor = 0.0f;   // YaRN (kernels/rope.h); global layers only
  float rope_attn_factor = 1.0f;  // cos/sin magnitude (YaRN, LongRoPE); global layers only
  // The context the rope was trained for before scaling (rope.scaling.original_context_length,
  // else context_length): LongRoPE's long factors serve sequences that may grow beyond it.
  std::int64_t n_ctx_orig = 0;
  float rope_corr_dims[2] = {0.0f, 0.0f};
  float rope_base_swa = 10000.0f;
  float rope_freq_scale_swa = 1.0f;
  // gpt-oss: the sliding-window layers rotate with the global layers' YaRN too (their corr dims
  // from rope_base_swa); elsewhere sliding layers keep plain rope.
  bool rope_yarn_swa = false;
  float rope_corr_dims_swa[2] = {0.0f, 0.0f};

  // Sliding-window attention: layer il attends to the last n_swa positions where is_swa[il].
  std::int64_t n_swa = 0;
  std::vector<bool> is_swa;

  // Layers that skip RoPE altogether (smollm3: every 4th); empty = every layer rotates.
  std::vector<bool> no_rope;

  // Attention scaling: scores are q.k * kq_scale; q_scale (gemma, phi3) multiplies q after rope
  // instead (a different float order, so it is kept as llama.cpp has it).
  float kq_scale = 1.0f;
  float q_scale = 0.0f;              // 0 = none
  float attn_softcap = 0.0f;         // scores capped to cap * tanh(s / cap) (gemma2); 0 = none
  float final_logit_softcap = 0.0f;  // 0 = none
  float embed_scale = 0.0f;          // 0 = none; gemma: sqrt(n_embd); granite: its embedding multiplier
  float residual_scale = 0.0f;       // granite: attention and FFN outputs scaled before each residual add
  float logit_mult = 0.0f;           // granite: logits times 1 / logit_scale; 0 = none

  FfnAct ffn_act = FfnAct::kSilu;
  bool pre_norms = true;       // RMSNorm before attention and FFN (all but olmo2, which has post norms only)
  bool qk_norm = false;        // RMSNorm of q and k before rope (gemma3, qwen3, olmo2)
  bool qk_norm_whole = false;  // olmo2: over all heads of a token at once, not per head
  bool post_norms = false;     // RMSNorm after attention and after the FFN (gemma2/3, olmo2)
  bool fused_gate_up = false;  // phi3: ffn_up holds gate then up (2 * n_ff rows), no ffn_gate
  bool attn_sinks = false;     // gpt-oss: a learned logit per head in each softmax's denominator

  // Mixture of experts (qwen3moe, llama with experts): every layer's FFN is n_expert SwiGLU
  // experts of n_ff_exp, stored merged (ffn_{gate,up,down}_exps); a softmax router picks
  // n_expert_used per token, their weights renormalized to sum 1 (as llama.cpp does for these)
  // and scaled by expert_weights_scale when that is set. 0 experts: a dense FFN of n_ff.
  std::int64_t n_expert = 0;
  std::int64_t n_expert_used = 0;
  std::int64_t n_ff_exp = 0;
  bool expert_weights_norm = true;
  // granitemoe (GraniteMoeShared): one dense SwiGLU FFN of n_ff_shexp beside the routed experts,
  // on the same input, added to their sum; 0 = none.
  std::int64_t n_ff_shexp = 0;
  float expert_weights_scale = 0.0f;  // 0 or 1 = none
  // gpt-oss: the router's raw logits (plus its bias) pick the experts and the chosen ones' logits
  // are soft-maxed into their weights (llama.cpp's SOFTMAX_WEIGHT gating); the router and every
  // expert matrix carry biases; the experts' GLU is kSwigluOai.
  bool expert_softmax_chosen = false;
  bool expert_biases = false;
  FfnAct expert_act = FfnAct::kSilu;

  std::int64_t n_embd_q() const { return n_head * head_dim; }
  std::int64_t n_embd_kv() const { return n_head_kv * head_dim; }
  bool layer_is_swa(std::int64_t il) const { return n_swa > 0 && is_swa[static_cast<std::size_t>(il)]; }
  bool is_moe() const { return n_expert > 0; }
  bool layer_has_rope(std::int64_t il) const { return no_rope.empty() || !no_rope[static_cast<std::size_t>(il)]; }
};

// Reads and validates the hyper-parameters. Throws wisp::Error naming the file and key for a
// missing or unknown architecture, a missing key, or inconsistent values.
HParams read_hparams(const GgufFile& file);

}  // namespace wisp::model
