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

Arch parse_arch(const GgufFile& f) {
  const std::string_view name = f.architecture();
  if (name.empty()) throw Error(f.path() + ": no general.architecture key: not a model file, or a damaged one");
  if (name == "llama") return Arch::kLlama;
  if (name == "qwen2") return Arch::kQwen2;
  if (name == "gemma3") return Arch::kGemma3;
  throw Error(f.path() + ": architecture '" + std::string(name) +
              "' is not supported (wisp runs llama, qwen2 and gemma3 models)");
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

void read_rope_scaling(const GgufFile& f, const Keys& k, HParams& hp) {
  std::string type = "linear";
  if (const GgufValue* v = k.find("rope.scaling.type")) type = std::string(v->as_string());
  float factor = k.real_or("rope.scaling.factor", 0.0f);
  if (factor == 0.0f) factor = k.real_or("rope.scale_linear", 0.0f);
  if (type == "none") {
    hp.rope_freq_scale = 1.0f;
  } else if (type == "linear") {
    hp.rope_freq_scale = factor == 0.0f ? 1.0f : 1.0f / factor;
  } else {
    throw Error(f.path() + ": rope scaling type '" + type + "' (" + k.key("rope.scaling.type") +
                ") is not supported yet (wisp supports none and linear)");
  }
}

// Gemma 3: sliding-window layers with their own rope base, Q scaled before attention.
void apply_gemma3(const GgufFile& f, const Keys& k, HParams& hp) {
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
    hp.is_swa.assign(static_cast<std::size_t>(hp.n_layer), false);
    const GgufValue* pat = k.find("attention.sliding_window_pattern");
    if (pat && pat->is_array()) {
      // One flag per layer (true = sliding window).
      const auto flags = pat->array_as<bool>();
      if (static_cast<std::int64_t>(flags.size()) != hp.n_layer) {
        k.fail("attention.sliding_window_pattern",
               "has " + std::to_string(flags.size()) + " entries for " + std::to_string(hp.n_layer) + " layers");
      }
      for (std::size_t i = 0; i < flags.size(); ++i) hp.is_swa[i] = flags[i];
    } else {
      // Every n-th layer is global, the others slide: with n = 6, layers 5, 11, 17, ... are global.
      const std::int64_t n = pat ? pat->as_i64() : 6;
      for (std::int64_t il = 0; il < hp.n_layer; ++il) hp.is_swa[il] = n == 0 || (il % n < n - 1);
    }
    hp.rope_base_swa = k.real_or("rope.freq_base_swa", 10000.0f);
    hp.rope_freq_scale_swa = 1.0f;  // llama.cpp never scales the local layers' rope
  }
  (void)f;
}

void validate(const GgufFile& f, const Keys& k, const HParams& hp) {
  auto need = [&](bool ok, std::string_view suffix, const std::string& what) {
    if (!ok) k.fail(suffix, what);
  };
  need(hp.n_embd > 0, "embedding_length", "must be positive");
  need(hp.n_layer > 0, "block_count", "must be positive");
  need(hp.n_ff > 0, "feed_forward_length", "must be positive");
  need(hp.n_head > 0, "attention.head_count", "must be positive");
  need(hp.n_head_kv > 0 && hp.n_head % hp.n_head_kv == 0, "attention.head_count_kv",
       "= " + std::to_string(hp.n_head_kv) + " must divide attention.head_count = " + std::to_string(hp.n_head));
  need(hp.head_dim > 0 && hp.head_dim % 2 == 0, "attention.key_length",
       "gives a head size of " + std::to_string(hp.head_dim) + "; it must be even and positive");
  need(hp.n_rot > 0 && hp.n_rot % 2 == 0 && hp.n_rot <= hp.head_dim, "rope.dimension_count",
       "= " + std::to_string(hp.n_rot) + " must be even, positive and at most the head size " +
           std::to_string(hp.head_dim));
  need(hp.rope_base > 0.0f, "rope.freq_base", "must be positive");
  if (hp.n_vocab <= 0) throw Error(f.path() + ": cannot tell the vocabulary size (no vocab_size, tokenizer or token_embd)");
}

}  // namespace

HParams read_hparams(const GgufFile& f) {
  HParams hp;
  hp.arch = parse_arch(f);
  hp.arch_name = std::string(f.architecture());
  const Keys k(f, hp.arch_name);

  hp.n_embd = k.count("embedding_length");
  hp.n_layer = k.count("block_count");
  hp.n_ff = k.count("feed_forward_length");
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
  read_rope_scaling(f, k, hp);

  // Defaults are llama's; each other architecture states how it differs.
  hp.kq_scale = 1.0f / std::sqrt(static_cast<float>(hp.head_dim));
  switch (hp.arch) {
    case Arch::kLlama: break;
    case Arch::kQwen2: hp.rope_style = kernels::RopeStyle::kNeox; break;
    case Arch::kGemma3: apply_gemma3(f, k, hp); break;
  }
  validate(f, k, hp);
  return hp;
}

}  // namespace wisp::model
