#include "model/hparams.h"

#include <cmath>
#include <string>

#include "wisp/error.h"

namespace wisp::model {

namespace {

// Typed access to "<arch>.<suffix>" keys with messages that name the file and the key.
class Keys {
 public:
  Keys(const GgufFile& f, std::string arch) : f_(f), arch_(std::move(arch)) {}

  std::string key(std::string_view suffix) const { return arch_ + "." + std::string(suffix); }

  std::int64_t count(std::string_view suffix) const { return checked_count(suffix, scalar(suffix)); }
  std::int64_t count_or(std::string_view suffix, std::int64_t fallback) const {
    const GgufValue* v = f_.find(key(suffix));
    return v ? checked_count(suffix, *v) : fallback;
  }
  float real_or(std::string_view suffix, float fallback) const {
    const GgufValue* v = f_.find(key(suffix));
    if (!v) return fallback;
    if (v->is_array()) fail(suffix, "is an array, expected a number");
    return static_cast<float>(v->as_f64());
  }
  const GgufValue* find(std::string_view suffix) const { return f_.find(key(suffix)); }

  [[noreturn]] void fail(std::string_view suffix, const std::string& what) const {
    throw Error(f_.path() + ": metadata key '" + key(suffix) + "' " + what);
  }

 private:
  const GgufValue& scalar(std::string_view suffix) const {
    const GgufValue* v = f_.find(key(suffix));
    if (!v) fail(suffix, "is missing (needed by the " + arch_ + " architecture)");
    return *v;
  }
  std::int64_t checked_count(std::string_view suffix, const GgufValue& v) const {
    if (v.is_array()) fail(suffix, "is a per-layer array; wisp supports one value for all layers");
    if (!v.is_integer()) fail(suffix, "is not an integer");
    const std::int64_t n = v.as_i64();
    if (n < 0 || n > (std::int64_t{1} << 31)) fail(suffix, "has an out-of-range value " + std::to_string(n));
    return n;
  }

  const GgufFile& f_;
  std::string arch_;
};

struct ArchName {
  std::string_view name;  // general.architecture
  Arch arch;
};
constexpr ArchName kArchs[] = {
    {"llama", Arch::kLlama},       {"qwen2", Arch::kQwen2},           {"qwen3", Arch::kQwen3},
    {"qwen3moe", Arch::kQwen3Moe}, {"gemma2", Arch::kGemma2},         {"gemma3", Arch::kGemma3},
    {"phi3", Arch::kPhi3},         {"smollm3", Arch::kSmolLM3},       {"olmo2", Arch::kOlmo2},
    {"granite", Arch::kGranite},   {"granitemoe", Arch::kGraniteMoe}, {"gpt-oss", Arch::kGptOss},
};

Arch parse_arch(const GgufFile& f) {
  const std::string_view name = f.architecture();
  if (name.empty()) throw Error(f.path() + ": no general.architecture key: not a model file, or a damaged one");
  for (const ArchName& a : kArchs) {
    if (a.name == name) return a.arch;
  }
  throw Error(f.path() + ": architecture '" + std::string(name) + "' is not supported (wisp runs " +
              supported_architectures() + ")");
}

std::int64_t vocab_size(const GgufFile& f, const Keys& k) {
  if (const GgufValue* v = k.find("vocab_size")) return v->as_i64();
  if (const GgufValue* t = f.find("tokenizer.ggml.tokens"); t && t->is_array()) {
    return static_cast<std::int64_t>(t->array_size());
  }
  // No vocabulary metadata: the embedding table's row count decides.
  if (const GgufTensor* e = f.find_tensor("token_embd.weight")) return e->ne[1];
  return 0;
}

// The rope scaling as llama.cpp applies it at the trained context: linear (and longrope, whose
// per-pair factors are tensors) divide the angles by the factor; yarn also blends in the
// unscaled angles of the fast-turning pairs and corrects the magnitude; attn_factor scales
// cos and sin (LongRoPE writes it).
void read_rope_scaling(const GgufFile& f, const Keys& k, HParams& hp) {
  std::string type = "linear";
  if (const GgufValue* v = k.find("rope.scaling.type")) type = std::string(v->as_string());
  float factor = k.real_or("rope.scaling.factor", 0.0f);
  if (factor == 0.0f) factor = k.real_or("rope.scale_linear", 0.0f);
  hp.rope_freq_scale = factor == 0.0f ? 1.0f : 1.0f / factor;
  hp.rope_attn_factor = 1.0f;
  if (type == "none") {
    hp.rope_freq_scale = 1.0f;
  } else if (type == "yarn") {
    if (k.find("rope.scaling.yarn_log_multiplier") != nullptr) {
      k.fail("rope.scaling.yarn_log_multiplier", "is set: wisp's YaRN has no log-multiplier variant yet");
    }
    // llama.cpp's defaults (the architectures here read no yarn_ext_factor or beta keys).
    hp.rope_ext_factor = 1.0f;
    const std::int64_t n_ctx_orig = k.count_or("rope.scaling.original_context_length", hp.n_ctx_train);
    if (n_ctx_orig <= 0) k.fail("rope.scaling.original_context_length", "is needed (and positive) for YaRN");
    kernels::rope_yarn_corr_dims(hp.n_rot, n_ctx_orig, hp.rope_base, 32.0f, 1.0f, hp.rope_corr_dims);
    // llama.cpp's magnitude factor, then cancelled against the kernel's own (ggml applies
    // 1 + 0.1 ln(factor) inside the rope; llama.cpp divides it out again since #17945).
    const float f_scale = 1.0f / hp.rope_freq_scale;
    float attn = f_scale <= 1.0f ? 1.0f : 0.1f * std::log(f_scale) + 1.0f;
    attn *= 1.0f / (1.0f + 0.1f * std::log(f_scale));
    hp.rope_attn_factor = attn;
  } else if (type != "linear" && type != "longrope") {
    throw Error(f.path() + ": rope scaling type '" + type + "' (" + k.key("rope.scaling.type") +
                ") is not supported yet (wisp supports none, linear, yarn and longrope)");
  }
  hp.rope_attn_factor *= k.real_or("rope.scaling.attn_factor", 1.0f);
}

// Which layers slide: a per-layer flag array, or every n-th layer global (n from the key, else
// the architecture's default; with n = 6 layers 5, 11, 17, ... are global), as llama.cpp reads it.
void read_swa_pattern(const Keys& k, HParams& hp, std::int64_t default_n) {
  hp.is_swa.assign(static_cast<std::size_t>(hp.n_layer), false);
  const GgufValue* pat = k.find("attention.sliding_window_pattern");
  if (pat && pat->is_array()) {
    const auto flags = pat->array_as<bool>();  // true = sliding window
    if (static_cast<std::int64_t>(flags.size()) != hp.n_layer) {
      k.fail("attention.sliding_window_pattern",
             "has " + std::to_string(flags.size()) + " entries for " + std::to_string(hp.n_layer) + " layers");
    }
    for (std::size_t i = 0; i < flags.size(); ++i) hp.is_swa[i] = flags[i];
    return;
  }
  const std::int64_t n = pat ? pat->as_i64() : default_n;
  for (std::int64_t il = 0; il < hp.n_layer; ++il) hp.is_swa[il] = n == 0 || (il % n < n - 1);
}

// Gemma 3: sliding-window layers with their own rope base, Q scaled before attention.
void apply_gemma3(const Keys& k, HParams& hp) {
  hp.rope_style = kernels::RopeStyle::kNeox;
  hp.ffn_act = FfnAct::kGeluTanh;
  hp.qk_norm = true;
  hp.post_norms = true;
  hp.embed_scale = std::sqrt(static_cast<float>(hp.n_embd));
  hp.final_logit_softcap = k.real_or("final_logit_softcapping", 0.0f);
  // llama.cpp (after gemma_pytorch): query_pre_attn_scalar is head_dim except for the 27B model
  // (62 layers), where it is n_embd / n_head. The scores then get no further scaling.
  const float pre_attn = hp.n_layer == 62 ? static_cast<float>(hp.n_embd / hp.n_head) : static_cast<float>(hp.head_dim);
  hp.q_scale = 1.0f / std::sqrt(pre_attn);
  hp.kq_scale = 1.0f;

  hp.n_swa = k.count_or("attention.sliding_window", 0);
  if (hp.n_swa > 0) {
    read_swa_pattern(k, hp, 6);
    hp.rope_base_swa = k.real_or("rope.freq_base_swa", 10000.0f);
    hp.rope_freq_scale_swa = 1.0f;  // llama.cpp never scales the local layers' rope
  }
}

// Gemma 2: every other layer (the even ones) slides, 4096 positions unless the file says;
// attention scores and logits soft-capped (50 and 30 unless the file says); Q scaled as gemma3.
void apply_gemma2(const Keys& k, HParams& hp) {
  hp.rope_style = kernels::RopeStyle::kNeox;
  hp.ffn_act = FfnAct::kGeluTanh;
  hp.post_norms = true;
  hp.embed_scale = std::sqrt(static_cast<float>(hp.n_embd));
  hp.attn_softcap = k.real_or("attn_logit_softcapping", 50.0f);
  hp.final_logit_softcap = k.real_or("final_logit_softcapping", 30.0f);
  // The 27B model (46 layers) scales by n_embd / n_head, the others by the head size.
  const float pre_attn = hp.n_layer == 46 ? static_cast<float>(hp.n_embd / hp.n_head) : static_cast<float>(hp.head_dim);
  hp.q_scale = 1.0f / std::sqrt(pre_attn);
  hp.kq_scale = 1.0f;
  hp.n_swa = k.count_or("attention.sliding_window", 4096);
  if (hp.n_swa > 0) read_swa_pattern(k, hp, 2);
  hp.rope_base_swa = k.real_or("rope.freq_base_swa", hp.rope_base);
  hp.rope_freq_scale_swa = hp.rope_freq_scale;
}

// OLMo 2: no norm before attention or FFN, RMSNorm after each instead; q and k normed over all
// heads of the token. OLMo 3 files (same architecture name) add sliding windows on 3 of 4 layers.
void apply_olmo2(const Keys& k, HParams& hp) {
  hp.rope_style = kernels::RopeStyle::kNeox;
  hp.pre_norms = false;
  hp.post_norms = true;
  hp.qk_norm = true;
  hp.qk_norm_whole = true;
  hp.n_swa = k.count_or("attention.sliding_window", 0);
  if (hp.n_swa > 0) {
    read_swa_pattern(k, hp, 4);
    hp.rope_base_swa = k.real_or("rope.freq_base_swa", hp.rope_base);
    hp.rope_freq_scale_swa = 1.0f;
  }
}

// Phi-3: fused QKV and gate/up weights (weights.cpp splits them by rows), partial rotary
// (rope.dimension_count), Q scaled by 1/sqrt(head size) after rope, LongRoPE factor tensors.
// Its sliding_window key is ignored, as llama.cpp does (it disabled Phi's SWA).
void apply_phi3(HParams& hp) {
  hp.rope_style = kernels::RopeStyle::kNeox;
  hp.q_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  hp.kq_scale = 1.0f;
  hp.fused_gate_up = true;
}

// gpt-oss: sliding window on the even layers (a pattern of 2, as llama.cpp reads it), YaRN on
// every layer, scores scaled by 1/sqrt(n_rot), sinks; MoE with softmax-over-the-chosen gating,
// biases everywhere and the clamped SwiGLU. Its post_attention_norm is the FFN's input norm
// (weights.cpp), so the layer is otherwise llama's with pre-norms.
void apply_gpt_oss(const Keys& k, HParams& hp) {
  hp.rope_style = kernels::RopeStyle::kNeox;
  hp.kq_scale = 1.0f / std::sqrt(static_cast<float>(hp.n_rot));
  hp.attn_sinks = true;
  hp.n_swa = k.count("attention.sliding_window");
  if (hp.n_swa > 0) read_swa_pattern(k, hp, 2);
  hp.rope_base_swa = k.real_or("rope.freq_base_swa", hp.rope_base);
  hp.rope_freq_scale_swa = hp.rope_freq_scale;
  hp.rope_yarn_swa = true;
  hp.rope_corr_dims_swa[0] = hp.rope_corr_dims[0];
  hp.rope_corr_dims_swa[1] = hp.rope_corr_dims[1];
  if (hp.rope_ext_factor != 0.0f && hp.rope_base_swa != hp.rope_base) {
    const std::int64_t n_ctx_orig = k.count_or("rope.scaling.original_context_length", hp.n_ctx_train);
    kernels::rope_yarn_corr_dims(hp.n_rot, n_ctx_orig, hp.rope_base_swa, 32.0f, 1.0f, hp.rope_corr_dims_swa);
  }
  hp.expert_weights_norm = false;
  hp.expert_softmax_chosen = true;
  hp.expert_biases = true;
  hp.expert_act = FfnAct::kSwigluOai;
}

// Experts: counts from the file; qwen3moe's and gpt-oss's expert size has its own key, llama's
// MoE (Mixtral) and granitemoe use feed_forward_length for it.
void read_experts(const Keys& k, HParams& hp) {
  hp.n_expert = k.count_or("expert_count", 0);
  if (hp.n_expert == 0) {
    if (hp.arch != Arch::kLlama) k.fail("expert_count", "is missing (needed by the " + hp.arch_name + " architecture)");
    return;
  }
  hp.n_expert_used = k.count("expert_used_count");
  if (hp.n_expert_used <= 0 || hp.n_expert_used > hp.n_expert) {
    k.fail("expert_used_count", "= " + std::to_string(hp.n_expert_used) +
                                    " must be between 1 and expert_count = " + std::to_string(hp.n_expert));
  }
  const bool ff_is_expert = hp.arch == Arch::kLlama || hp.arch == Arch::kGraniteMoe;
  hp.n_ff_exp = ff_is_expert ? hp.n_ff : k.count("expert_feed_forward_length");
  if (hp.n_ff_exp <= 0) k.fail("expert_feed_forward_length", "must be positive");
  hp.expert_weights_scale = k.real_or("expert_weights_scale", 0.0f);
}

// Granite: multipliers on the embeddings, residual branches, attention scores and logits.
void apply_granite(const Keys& k, HParams& hp) {
  const GgufValue* ls = k.find("logit_scale");
  if (!ls) k.fail("logit_scale", "is missing (needed by the granite architecture)");
  hp.logit_mult = 1.0f / static_cast<float>(ls->as_f64());
  hp.residual_scale = k.real_or("residual_scale", 0.0f);
  hp.embed_scale = k.real_or("embedding_scale", 0.0f);
  const float attn = k.real_or("attention.scale", 0.0f);
  if (attn != 0.0f) hp.kq_scale = attn;
  // rope.scaling.finetuned doubles as Granite's switch for rope (default on).
  const GgufValue* ft = k.find("rope.scaling.finetuned");
  if (ft && !ft->as_bool()) hp.no_rope.assign(static_cast<std::size_t>(hp.n_layer), true);
}

void validate(const GgufFile& f, const Keys& k, const HParams& hp) {
  auto need = [&](bool ok, std::string_view suffix, const std::string& what) {
    if (!ok) k.fail(suffix, what);
  };
  need(hp.n_embd > 0, "embedding_length", "must be positive");
  need(hp.n_layer > 0, "block_count", "must be positive");
  need(hp.n_ff > 0 || hp.is_moe(), "feed_forward_length", "must be given and positive");
  need(hp.n_head > 0, "attention.head_count", "must be positive");
  need(hp.n_head_kv > 0 && hp.n_head % hp.n_head_kv == 0, "attention.head_count_kv",
       "= " + std::to_string(hp.n_head_kv) + " must divide attention.head_count = " + std::to_string(hp.n_head));
  need(hp.head_dim > 0 && hp.head_dim % 2 == 0, "attention.key_length",
       "gives a head size of " + std::to_string(hp.head_dim) + "; it must be even and positive");
  need(hp.n_rot > 0 && hp.n_rot % 2 == 0 && hp.n_rot <= hp.head_dim, "rope.dimension_count",
       "= " + std::to_string(hp.n_rot) + " must be even, positive and at most the head size " +
           std::to_string(hp.head_dim));
  need(hp.rope_base > 0.0f, "rope.freq_base", "must be positive");
  if (hp.n_vocab <= 0)
    throw Error(f.path() + ": cannot tell the vocabulary size (no vocab_size, tokenizer or token_embd)");
}

}  // namespace

std::string supported_architectures() {
  std::string s;
  for (const ArchName& a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.name);
  return s;
}

HParams read_hparams(const GgufFile& f) {
  HParams hp;
  hp.arch = parse_arch(f);
  hp.arch_name = std::string(f.architecture());
  const Keys k(f, hp.arch_name);

  hp.n_embd = k.count("embedding_length");
  hp.n_layer = k.count("block_count");
  hp.n_ff = k.count_or("feed_forward_length", 0);  // checked in validate(): MoE files may lack it
  hp.n_head = k.count("attention.head_count");
  hp.n_head_kv = k.count_or("attention.head_count_kv", hp.n_head);
  hp.n_ctx_train = k.count_or("context_length", 0);
  hp.head_dim = k.count_or("attention.key_length", hp.n_head > 0 ? hp.n_embd / hp.n_head : 0);
  const std::int64_t head_dim_v = k.count_or("attention.value_length", hp.head_dim);
  if (head_dim_v != hp.head_dim) {
    k.fail("attention.value_length", "= " + std::to_string(head_dim_v) + " differs from the key length " +
                                         std::to_string(hp.head_dim) + "; wisp needs them equal");
  }
  hp.n_rot = static_cast<int>(k.count_or("rope.dimension_count", hp.head_dim));
  hp.rope_base = k.real_or("rope.freq_base", 10000.0f);
  const GgufValue* eps = k.find("attention.layer_norm_rms_epsilon");
  if (!eps) k.fail("attention.layer_norm_rms_epsilon", "is missing (the RMSNorm epsilon)");
  hp.rms_eps = static_cast<float>(eps->as_f64());
  hp.n_vocab = vocab_size(f, k);
  hp.n_ctx_orig = k.count_or("rope.scaling.original_context_length", hp.n_ctx_train);
  read_rope_scaling(f, k, hp);

  // Defaults are llama's; each other architecture states how it differs.
  hp.kq_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  switch (hp.arch) {
    case Arch::kLlama: break;
    case Arch::kQwen2: hp.rope_style = kernels::RopeStyle::kNeox; break;
    case Arch::kQwen3:  // q/k RMSNorm per head before rope
      hp.rope_style = kernels::RopeStyle::kNeox;
      hp.qk_norm = true;
      break;
    case Arch::kQwen3Moe:  // qwen3 attention, MoE FFN
      hp.rope_style = kernels::RopeStyle::kNeox;
      hp.qk_norm = true;
      break;
    case Arch::kGemma2: apply_gemma2(k, hp); break;
    case Arch::kGemma3: apply_gemma3(k, hp); break;
    case Arch::kPhi3: apply_phi3(hp); break;
    case Arch::kSmolLM3:  // llama with every 4th layer (3, 7, 11, ...) unrotated
      hp.no_rope.assign(static_cast<std::size_t>(hp.n_layer), false);
      for (std::int64_t il = 0; il < hp.n_layer; ++il) hp.no_rope[il] = (il + 1) % 4 == 0;
      break;
    case Arch::kOlmo2: apply_olmo2(k, hp); break;
    case Arch::kGranite: apply_granite(k, hp); break;
    case Arch::kGraniteMoe:
      apply_granite(k, hp);
      hp.n_ff_shexp = k.count_or("expert_shared_feed_forward_length", 0);
      break;
    case Arch::kGptOss: apply_gpt_oss(k, hp); break;
  }
  if (hp.arch == Arch::kLlama || hp.arch == Arch::kQwen3Moe || hp.arch == Arch::kGptOss || hp.arch == Arch::kGraniteMoe)
    read_experts(k, hp);
  validate(f, k, hp);
  return hp;
}

}  // namespace wisp::model
