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

enum class Arch : std::uint8_t { kLlama, kQwen2, kGemma3 };
enum class FfnAct : std::uint8_t { kSilu, kGeluTanh };

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
  float rope_base_swa = 10000.0f;
  float rope_freq_scale_swa = 1.0f;

  // Sliding-window attention: layer il attends to the last n_swa positions where is_swa[il].
  std::int64_t n_swa = 0;
  std::vector<bool> is_swa;

  // Attention scaling: scores are q.k * kq_scale; q_scale (gemma3) multiplies q after rope instead.
  float kq_scale = 1.0f;
  float q_scale = 0.0f;  // 0 = none
  float final_logit_softcap = 0.0f;  // 0 = none
  float embed_scale = 0.0f;          // 0 = none; gemma: sqrt(n_embd)

  FfnAct ffn_act = FfnAct::kSilu;
  bool qk_norm = false;     // RMSNorm of each q and k head (gemma3)
  bool post_norms = false;  // RMSNorm after attention and after the FFN (gemma3)

  std::int64_t n_embd_q() const { return n_head * head_dim; }
  std::int64_t n_embd_kv() const { return n_head_kv * head_dim; }
  bool layer_is_swa(std::int64_t il) const { return n_swa > 0 && is_swa[static_cast<std::size_t>(il)]; }
};

// Reads and validates the hyper-parameters. Throws wisp::Error naming the file and key for a
// missing or unknown architecture, a missing key, or inconsistent values.
HParams read_hparams(const GgufFile& file);

}  // namespace wisp::model
