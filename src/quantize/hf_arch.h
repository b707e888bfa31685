// What a Hugging Face checkpoint folder means in GGUF terms: which architecture it is, the
// hyper-parameters llama.cpp's converter writes for it, and the plan that maps each HF tensor to
// its GGUF name together with the row transform the GGUF layout needs (llama's Q/K row order,
// gemma's (1 + w) norms). Supported: LlamaForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,
// Gemma2ForCausalLM, Gemma3ForCausalLM and the text part of Gemma3ForConditionalGeneration,
// SmolLM3ForCausalLM, Olmo2ForCausalLM, GraniteForCausalLM and Phi3ForCausalLM (fused qkv and
// gate/up, LongRoPE factors as tensors).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/gguf_writer.h"
#include "formats/hf_checkpoint.h"

namespace wisp::quantize {

enum class RowTransform {
  kNone,
  kPermuteHeads,  // llama: rows of each head reordered from halves to interleaved pairs
  kPlusOne,       // gemma: HF stores norm weights as w, the GGUF (and the runtime) use 1 + w
};

struct HfTensorPlan {
  std::string hf_name;                 // "model.layers.0.self_attn.q_proj.weight"; "" when generated
  std::string gguf_name;               // "blk.0.attn_q.weight"
  std::vector<std::int64_t> hf_shape;  // expected shape, outermost first
  RowTransform transform = RowTransform::kNone;
  std::int64_t permute_heads = 0;  // head count for kPermuteHeads
  // A 1-D F32 tensor llama.cpp's converter makes from config.json rather than reads (phi3's
  // rope_factors_long/short from rope_scaling's long_factor/short_factor); hf_name is then "".
  std::vector<float> generated;
};

struct HfModelPlan {
  std::string hf_architecture;  // "LlamaForCausalLM"
  std::string arch;             // GGUF general.architecture: "llama", "qwen2", "gemma3", ...
  nlohmann::json text_config;   // config.json, or its "text_config" for multimodal wrappers
  std::int64_t n_vocab = 0;     // rows of the embedding
  std::vector<HfTensorPlan> tensors;
};

// Reads config.json and the tensor names of `ckpt`; throws wisp::Error for an unknown
// architecture (naming it and the supported ones) or a missing tensor (naming tensor and folder).
HfModelPlan plan_hf_model(const HfCheckpoint& ckpt);

// Writes general.architecture and the `<arch>.*` hyper-parameter keys llama.cpp's converter writes.
void write_hf_hparams(const HfModelPlan& plan, GgufWriter& w);

}  // namespace wisp::quantize
