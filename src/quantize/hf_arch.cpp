// Architecture table for Hugging Face folders. The names and hyper-parameter keys follow what
// llama.cpp's convert_hf_to_gguf.py produces, so the output loads in llama.cpp and in wisp alike.
#include "quantize/hf_arch.h"

#include <cmath>
#include <optional>
#include <utility>

#include "wisp/error.h"

namespace wisp::quantize {

namespace {

using nlohmann::json;

struct ArchInfo {
  const char* hf;    // config.json architectures[0]
  const char* gguf;  // general.architecture
  bool multimodal;   // hyper-parameters live under "text_config"
};

constexpr ArchInfo kArchs[] = {
    {"LlamaForCausalLM", "llama", false},     {"Qwen2ForCausalLM", "qwen2", false},
    {"Qwen3ForCausalLM", "qwen3", false},     {"Gemma2ForCausalLM", "gemma2", false},
    {"Gemma3ForCausalLM", "gemma3", false},   {"Gemma3ForConditionalGeneration", "gemma3", true},
    {"SmolLM3ForCausalLM", "smollm3", false}, {"Olmo2ForCausalLM", "olmo2", false},
    {"GraniteForCausalLM", "granite", false}, {"Phi3ForCausalLM", "phi3", false},
};

// How an architecture's layers differ from llama's, as llama.cpp's converter and runtime see them.
struct Layout {
  bool permute_qk = false;    // llama.cpp's "llama"-family rope: Q/K rows reordered (LlamaModel subclasses)
  bool llama_keys = false;    // vocab_size and rope.dimension_count written (LlamaModel subclasses)
  bool gemma = false;         // norms stored as w, used as 1 + w; sandwich norms around attention and FFN
  bool qkv_bias = false;      // qwen2: q/k/v biases
  bool qk_norm_head = false;  // qwen3, gemma3: RMSNorm per head over head_dim
  bool qk_norm_full = false;  // olmo2: RMSNorm over all of q (all of k), no pre-norms, post-norms only
  bool tied_default = false;  // transformers' default for tie_word_embeddings
};

Layout layout_of(const std::string& arch) {
  Layout l;
  l.permute_qk = arch == "llama" || arch == "smollm3" || arch == "granite";
  l.llama_keys = l.permute_qk;
  l.gemma = arch == "gemma2" || arch == "gemma3";
  l.qkv_bias = arch == "qwen2";
  l.qk_norm_head = arch == "qwen3" || arch == "gemma3";
  l.qk_norm_full = arch == "olmo2";
  l.tied_default = l.gemma || arch == "smollm3";
  return l;
}

std::string supported_list() {
  std::string s;
  for (const ArchInfo& a : kArchs) s += (s.empty() ? "" : ", ") + std::string(a.hf);
  return s;
}

std::optional<std::int64_t> opt_int(const json& cfg, const char* key) {
  auto it = cfg.find(key);
  if (it == cfg.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}
std::optional<double> opt_num(const json& cfg, const char* key) {
  auto it = cfg.find(key);
  if (it == cfg.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

struct Hparams {
  std::int64_t n_layer, n_embd, n_ff, n_head, n_head_kv, head_dim;
  bool tied;
  bool gemma;
  bool head_dim_stated;  // config.json's head_dim, which llama.cpp writes as key/value length
};

Hparams read_hparams(const json& cfg, const std::string& arch, const std::string& cfg_path) {
  auto need = [&](const char* key) {
    auto v = opt_int(cfg, key);
    if (!v || *v <= 0) throw Error(cfg_path + ": missing or invalid integer field \"" + key + "\"");
    return *v;
  };
  const Layout l = layout_of(arch);
  Hparams h{};
  h.gemma = l.gemma;
  h.n_layer = need("num_hidden_layers");
  h.n_embd = need("hidden_size");
  h.n_ff = need("intermediate_size");
  h.n_head = need("num_attention_heads");
  h.n_head_kv = opt_int(cfg, "num_key_value_heads").value_or(h.n_head);
  // Gemma's head_dim is not hidden/heads (Gemma 3 270M: 640/4 = 160, head_dim 256); transformers'
  // Gemma2Config and Gemma3TextConfig default it to 256. Granite's converter ignores head_dim.
  const bool ignores_head_dim = arch == "granite" || arch == "phi3";  // their converters do
  h.head_dim_stated = cfg.contains("head_dim") && !ignores_head_dim;
  h.head_dim =
      (ignores_head_dim ? std::nullopt : opt_int(cfg, "head_dim")).value_or(h.gemma ? 256 : h.n_embd / h.n_head);
  // transformers' defaults: tied for Gemma and SmolLM3, untied for the others. llama.cpp's gemma2
  // converter drops an lm_head even when present (the runtime ties it).
  auto tied = cfg.find("tie_word_embeddings");
  h.tied = tied != cfg.end() && tied->is_boolean() ? tied->get<bool>() : l.tied_default;
  if (arch == "gemma2") h.tied = true;
  return h;
}

// The folder's prefix in front of "layers.N..." / "embed_tokens" (multimodal Gemma 3 has moved it
// between transformers versions).
std::string find_prefix(const HfCheckpoint& ckpt, bool multimodal) {
  const char* candidates[] = {"model.", "language_model.model.", "model.language_model."};
  for (const char* p : candidates) {
    if (!multimodal && std::string(p) != "model.") continue;
    if (ckpt.find(std::string(p) + "embed_tokens.weight")) return p;
  }
  throw Error(ckpt.dir().string() + ": missing tensor " + (multimodal ? "language_model.model." : "model.") +
              "embed_tokens.weight (the token embedding)");
}

// Phi-3's rope settings as llama.cpp's converter reads them: config.json's rope_parameters or
// rope_scaling (either may be null), with partial_rotary_factor and
// original_max_position_embeddings from the top level when not inside.
struct Phi3Rope {
  std::int64_t dims = 0;      // rotated values per head: int(partial_rotary_factor * n_embd) / n_head
  std::int64_t orig_ctx = 0;  // original_max_position_embeddings
  std::vector<float> long_factors, short_factors;
  std::optional<float> attn_factor;  // with LongRoPE factors
};

Phi3Rope phi3_rope(const json& cfg, const Hparams& h, const std::string& cfg_path) {
  json rp = cfg.contains("rope_parameters") ? cfg["rope_parameters"] : cfg.value("rope_scaling", json());
  if (!rp.is_object()) rp = json::object();
  Phi3Rope r;
  const double pct = opt_num(rp, "partial_rotary_factor").value_or(opt_num(cfg, "partial_rotary_factor").value_or(1.0));
  r.dims = static_cast<std::int64_t>(pct * static_cast<double>(h.n_embd)) / h.n_head;
  auto orig = opt_int(rp, "original_max_position_embeddings");
  if (!orig) orig = opt_int(cfg, "original_max_position_embeddings");
  if (!orig || *orig <= 0) throw Error(cfg_path + ": Phi-3 needs \"original_max_position_embeddings\"");
  r.orig_ctx = *orig;
  auto floats = [&](const char* key) {
    std::vector<float> v;
    if (auto it = rp.find(key); it != rp.end() && it->is_array()) {
      for (const json& x : *it) {
        if (!x.is_number()) throw Error(cfg_path + ": rope_scaling." + key + " holds a non-number");
        v.push_back(x.get<float>());
      }
    }
    return v;
  };
  r.long_factors = floats("long_factor");
  if (r.long_factors.empty()) return r;
  r.short_factors = floats("short_factor");
  const std::string type = rp.value("rope_type", rp.value("type", std::string()));
  if (type != "longrope" && type != "su") {
    throw Error(cfg_path + ": Phi-3 rope_scaling type '" + type + "' with long_factor: only longrope is supported");
  }
  if (r.long_factors.size() != r.short_factors.size() ||
      static_cast<std::int64_t>(r.long_factors.size()) * 2 != r.dims) {
    throw Error(cfg_path + ": rope_scaling long_factor and short_factor must each hold " + std::to_string(r.dims / 2) +
                " values (half the rotated dimensions)");
  }
  const double n_ctx = static_cast<double>(opt_int(cfg, "max_position_embeddings").value_or(4096));
  const double scale = n_ctx / static_cast<double>(r.orig_ctx);
  r.attn_factor = scale > 1.0
                      ? static_cast<float>(std::sqrt(1.0 + std::log(scale) / std::log(static_cast<double>(r.orig_ctx))))
                      : 1.0f;
  return r;
}

}  // namespace

HfModelPlan plan_hf_model(const HfCheckpoint& ckpt) {
  HfModelPlan plan;
  plan.hf_architecture = ckpt.architecture();
  const ArchInfo* info = nullptr;
  for (const ArchInfo& a : kArchs) {
    if (plan.hf_architecture == a.hf) info = &a;
  }
  const std::string cfg_path = (ckpt.dir() / kHfConfigFile).string();
  if (!info) {
    throw Error(cfg_path + ": architecture " + plan.hf_architecture +
                " is not supported; supported: " + supported_list());
  }
  plan.arch = info->gguf;
  plan.text_config = ckpt.config();
  if (info->multimodal) {
    auto it = ckpt.config().find("text_config");
    if (it == ckpt.config().end() || !it->is_object()) throw Error(cfg_path + ": missing object \"text_config\"");
    plan.text_config = *it;
  }
  const Hparams h = read_hparams(plan.text_config, plan.arch, cfg_path);
  const std::string pre = find_prefix(ckpt, info->multimodal);
  const SafetensorsTensor& embd = ckpt.tensor(pre + "embed_tokens.weight");
  plan.n_vocab = embd.shape.empty() ? 0 : embd.shape[0];

  auto add = [&](std::string hf, std::string gguf, std::vector<std::int64_t> shape,
                 RowTransform t = RowTransform::kNone, std::int64_t heads = 0) {
    plan.tensors.push_back({std::move(hf), std::move(gguf), std::move(shape), t, heads});
  };
  const std::int64_t q_rows = h.n_head * h.head_dim, kv_rows = h.n_head_kv * h.head_dim;
  const Layout l = layout_of(plan.arch);
  const RowTransform norm = l.gemma ? RowTransform::kPlusOne : RowTransform::kNone;
  // llama.cpp's rope for the llama family rotates interleaved pairs, HF's the two halves of each
  // head, so its converter reorders Q and K rows there; the other architectures keep the HF order.
  const RowTransform qk = l.permute_qk ? RowTransform::kPermuteHeads : RowTransform::kNone;

  add(pre + "embed_tokens.weight", "token_embd.weight", {plan.n_vocab, h.n_embd});
  if (plan.arch == "phi3") {
    Phi3Rope rope = phi3_rope(plan.text_config, h, cfg_path);
    if (!rope.long_factors.empty()) {
      const auto n = static_cast<std::int64_t>(rope.long_factors.size());
      plan.tensors.push_back(
          {"", "rope_factors_long.weight", {n}, RowTransform::kNone, 0, std::move(rope.long_factors)});
      plan.tensors.push_back(
          {"", "rope_factors_short.weight", {n}, RowTransform::kNone, 0, std::move(rope.short_factors)});
    }
  }
  for (std::int64_t i = 0; i < h.n_layer; ++i) {
    const std::string hf = pre + "layers." + std::to_string(i) + ".";
    const std::string g = "blk." + std::to_string(i) + ".";
    if (plan.arch == "phi3") {  // fused q/k/v and gate/up, as the HF checkpoint stores them
      add(hf + "input_layernorm.weight", g + "attn_norm.weight", {h.n_embd});
      add(hf + "self_attn.qkv_proj.weight", g + "attn_qkv.weight", {q_rows + 2 * kv_rows, h.n_embd});
      add(hf + "self_attn.o_proj.weight", g + "attn_output.weight", {h.n_embd, q_rows});
      add(hf + "post_attention_layernorm.weight", g + "ffn_norm.weight", {h.n_embd});
      add(hf + "mlp.gate_up_proj.weight", g + "ffn_up.weight", {2 * h.n_ff, h.n_embd});
      add(hf + "mlp.down_proj.weight", g + "ffn_down.weight", {h.n_embd, h.n_ff});
      continue;
    }
    if (!l.qk_norm_full) add(hf + "input_layernorm.weight", g + "attn_norm.weight", {h.n_embd}, norm);
    add(hf + "self_attn.q_proj.weight", g + "attn_q.weight", {q_rows, h.n_embd}, qk, h.n_head);
    add(hf + "self_attn.k_proj.weight", g + "attn_k.weight", {kv_rows, h.n_embd}, qk, h.n_head_kv);
    add(hf + "self_attn.v_proj.weight", g + "attn_v.weight", {kv_rows, h.n_embd});
    if (l.qkv_bias) {
      add(hf + "self_attn.q_proj.bias", g + "attn_q.bias", {q_rows});
      add(hf + "self_attn.k_proj.bias", g + "attn_k.bias", {kv_rows});
      add(hf + "self_attn.v_proj.bias", g + "attn_v.bias", {kv_rows});
    }
    add(hf + "self_attn.o_proj.weight", g + "attn_output.weight", {h.n_embd, q_rows});
    if (l.qk_norm_head) {
      add(hf + "self_attn.q_norm.weight", g + "attn_q_norm.weight", {h.head_dim}, norm);
      add(hf + "self_attn.k_norm.weight", g + "attn_k_norm.weight", {h.head_dim}, norm);
    }
    if (l.qk_norm_full) {
      add(hf + "self_attn.q_norm.weight", g + "attn_q_norm.weight", {q_rows});
      add(hf + "self_attn.k_norm.weight", g + "attn_k_norm.weight", {kv_rows});
      add(hf + "post_attention_layernorm.weight", g + "post_attention_norm.weight", {h.n_embd});
      add(hf + "post_feedforward_layernorm.weight", g + "post_ffw_norm.weight", {h.n_embd});
    } else if (l.gemma) {
      add(hf + "post_attention_layernorm.weight", g + "post_attention_norm.weight", {h.n_embd}, norm);
      add(hf + "pre_feedforward_layernorm.weight", g + "ffn_norm.weight", {h.n_embd}, norm);
      add(hf + "post_feedforward_layernorm.weight", g + "post_ffw_norm.weight", {h.n_embd}, norm);
    } else {
      add(hf + "post_attention_layernorm.weight", g + "ffn_norm.weight", {h.n_embd});
    }
    add(hf + "mlp.gate_proj.weight", g + "ffn_gate.weight", {h.n_ff, h.n_embd});
    add(hf + "mlp.up_proj.weight", g + "ffn_up.weight", {h.n_ff, h.n_embd});
    add(hf + "mlp.down_proj.weight", g + "ffn_down.weight", {h.n_embd, h.n_ff});
  }
  add(pre + "norm.weight", "output_norm.weight", {h.n_embd}, norm);
  if (!h.tied) {
    const std::string head =
        info->multimodal && pre == "language_model.model." ? "language_model.lm_head.weight" : "lm_head.weight";
    add(head, "output.weight", {plan.n_vocab, h.n_embd});
  }
  return plan;
}

void write_hf_hparams(const HfModelPlan& plan, GgufWriter& w) {
  const json& cfg = plan.text_config;
  const Hparams h = read_hparams(cfg, plan.arch, "config.json");
  const std::string a = plan.arch + ".";
  auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  w.set_string("general.architecture", plan.arch);
  w.set_u32(a + "block_count", u32(h.n_layer));
  w.set_u32(a + "context_length", u32(opt_int(cfg, "max_position_embeddings").value_or(h.gemma ? 131072 : 4096)));
  w.set_u32(a + "embedding_length", u32(h.n_embd));
  w.set_u32(a + "feed_forward_length", u32(h.n_ff));
  w.set_u32(a + "attention.head_count", u32(h.n_head));
  w.set_u32(a + "attention.head_count_kv", u32(h.n_head_kv));
  const bool gemma2 = plan.arch == "gemma2";
  // llama.cpp's gemma2 converter writes no rope base (the runtime's default 10000 is Gemma 2's).
  if (auto theta = opt_num(cfg, "rope_theta"); theta && !gemma2) {
    w.set_f32(a + "rope.freq_base", static_cast<float>(*theta));
  } else if (plan.arch == "gemma3") {
    w.set_f32(a + "rope.freq_base", 1'000'000.0f);
  }
  w.set_f32(a + "attention.layer_norm_rms_epsilon",
            static_cast<float>(opt_num(cfg, "rms_norm_eps").value_or(h.gemma ? 1e-6 : 1e-5)));
  // llama.cpp writes key/value length only when config.json states head_dim (gemma always).
  if (h.gemma || h.head_dim_stated) {
    w.set_u32(a + "attention.key_length", u32(h.head_dim));
    w.set_u32(a + "attention.value_length", u32(h.head_dim));
  }
  if (layout_of(plan.arch).llama_keys) {
    w.set_u32(a + "vocab_size", u32(opt_int(cfg, "vocab_size").value_or(plan.n_vocab)));
    w.set_u32(a + "rope.dimension_count", u32(h.head_dim));
  }
  if (h.gemma) {
    if (auto sw = opt_int(cfg, "sliding_window")) w.set_u32(a + "attention.sliding_window", u32(*sw));
  }
  if (gemma2) {
    auto need = [&](const char* key) {
      auto v = opt_num(cfg, key);
      if (!v) throw Error(std::string("config.json: Gemma 2 needs the number \"") + key + "\"");
      return static_cast<float>(*v);
    };
    w.set_f32(a + "attn_logit_softcapping", need("attn_logit_softcapping"));
    w.set_f32(a + "final_logit_softcapping", need("final_logit_softcapping"));
  }
  if (plan.arch == "phi3") {
    const Phi3Rope rope = phi3_rope(cfg, h, "config.json");
    w.set_u32(a + "rope.scaling.original_context_length", u32(rope.orig_ctx));
    w.set_u32(a + "rope.dimension_count", u32(rope.dims));
    // 0 when config.json has none: llama.cpp tells Phi-4 (no window) from Phi-3 by it.
    w.set_u32(a + "attention.sliding_window", u32(opt_int(cfg, "sliding_window").value_or(0)));
    if (rope.attn_factor) w.set_f32(a + "rope.scaling.attn_factor", *rope.attn_factor);
  }
  if (plan.arch == "granite") {  // its multipliers, under llama.cpp's key names
    const std::pair<const char*, const char*> scales[] = {{"attention_multiplier", "attention.scale"},
                                                          {"embedding_multiplier", "embedding_scale"},
                                                          {"residual_multiplier", "residual_scale"},
                                                          {"logits_scaling", "logit_scale"}};
    for (const auto& [hf, key] : scales) {
      if (auto v = opt_num(cfg, hf); v && *v != 0.0) w.set_f32(a + key, static_cast<float>(*v));
    }
  }
  // Linear RoPE scaling (Gemma 3 4B+, some Llamas); other schemes are left to the runtime's defaults.
  auto rs = cfg.find("rope_scaling");
  if (rs != cfg.end() && rs->is_object()) {
    const std::string type = rs->value("rope_type", rs->value("type", std::string()));
    if (type == "linear" && rs->contains("factor") && (*rs)["factor"].is_number()) {
      w.set_string(a + "rope.scaling.type", "linear");
      w.set_f32(a + "rope.scaling.factor", (*rs)["factor"].get<float>());
    }
  }
}

}  // namespace wisp::quantize
