// tokenizer.ggml.pre names -> the pre-tokenizer each stands for (its kind and BPE options).
#include <initializer_list>
#include <string>

#include "tokenizer/pre_tokenizer.h"
#include "wisp/error.h"

namespace wisp {

PreTokenizerSpec pre_tokenizer_for(std::string_view pre) {
  auto any_of = [&](std::initializer_list<std::string_view> names) {
    for (std::string_view n : names)
      if (pre == n) return true;
    return false;
  };
  // Names as convert_hf_to_gguf.py writes them; the groupings follow llama.cpp, which maps each
  // of these to the same regex.
  if (pre.empty() || pre == "default") return {PreTokenizerKind::kDefault, false};
  // (tests/unit/tokenizer/test_pre_tokenizer_names.cpp checks every group against the regexes
  // llama.cpp's source gives its names.)
  if (any_of({"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2", "jina-v5-nano",
              "glm4", "glm5"}))
    return {PreTokenizerKind::kLlama3, true};
  if (any_of({"dbrx", "smaug-bpe", "chatglm-bpe"})) return {PreTokenizerKind::kLlama3, false};
  if (any_of(
          {"qwen2", "deepseek-r1-qwen", "megrez", "stablelm2", "kormo", "f2llmv2", "hunyuan", "grok-2", "solar-open"}))
    return {PreTokenizerKind::kQwen2, false};
  if (any_of({"gpt-4o", "llama4", "kanana2", "talkie", "minimax-m2"})) return {PreTokenizerKind::kGpt4o, false};
  if (any_of({"smollm", "starcoder", "refact", "command-r", "codeshell", "exaone", "minerva-7b", "mellum2"}))
    return {PreTokenizerKind::kSmollm, false};
  if (any_of({"gpt2",        "gpt-2",       "phi-2",      "mpt",          "olmo",       "jais",           "exaone4",
              "roberta-bpe", "jina-es",     "jina-de",    "gigachat",     "jina-v2-es", "jina-v2-de",     "a.x-4.0",
              "mellum",      "modern-bert", "jina-v1-en", "jina-v2-code", "trillion",   "granite-docling"}))
    return {PreTokenizerKind::kGpt2, false};
  if (pre == "tekken") return {PreTokenizerKind::kTekken, true};
  if (any_of({"deepseek-v3", "hunyuan-dense", "hy_v4", "joyai-llm"})) return {PreTokenizerKind::kDeepseek3, false};
  if (pre == "falcon") return {PreTokenizerKind::kFalcon, false};
  if (pre == "spark2_5") return {PreTokenizerKind::kSpark, false};
  if (any_of({"poro-chat", "bloom", "gpt3-finnish"})) return {PreTokenizerKind::kPoro, false};
  if (pre == "viking") return {PreTokenizerKind::kViking, false};
  if (pre == "deepseek-coder") return {PreTokenizerKind::kDeepseekCoder, false};
  if (pre == "exaone-moe") return {PreTokenizerKind::kExaoneMoe, false};
  if (pre == "jais-2") return {PreTokenizerKind::kJais2, false};
  if (pre == "superbpe") return {PreTokenizerKind::kSuperBpe, false};
  if (pre == "minicpm5") return {PreTokenizerKind::kMinicpm5, true};
  if (pre == "qwen35") return {PreTokenizerKind::kQwen35, false};
  if (any_of({"bailingmoe", "bailingmoe2", "llada-moe"})) return {PreTokenizerKind::kBailingmoe, false};
  if (pre == "laguna") return {PreTokenizerKind::kLaguna, false};
  if (pre == "ufakzeka") return {PreTokenizerKind::kUfakzeka, false};
  if (pre == "seed-coder") return {PreTokenizerKind::kSeedCoder, false};
  if (any_of({"tiny_aya", "cohere2moe"})) return {PreTokenizerKind::kTinyAya, false};
  if (pre == "youtu") return {PreTokenizerKind::kYoutu, true};
  if (pre == "kimi-k2") return {PreTokenizerKind::kKimiK2, false};
  if (pre == "afmoe") return {PreTokenizerKind::kAfmoe, false};
  if (pre == "deepseek-llm") return {PreTokenizerKind::kDeepseekLlm, false};
  if (pre == "granite-embed-multi-97m") return {PreTokenizerKind::kGraniteEmbMulti, true};
  if (pre == "chameleon") return {PreTokenizerKind::kChameleon, false};
  if (any_of({"gemma4", "granite-embed-multi-311m"}))
    return {.kind = PreTokenizerKind::kLines,
            .byte_level = false,
            .escape_spaces = true,
            .newline_runs_whole = true,
            .force_bos = true};
  if (pre == "sarvam-moe") return {.kind = PreTokenizerKind::kLines, .byte_level = false, .escape_spaces = true};
  throw Error(
      "tokenizer.ggml.pre '" + std::string(pre) +
      "' is not a pre-tokenizer wisp implements (gpt2, smollm, llama3/llama-bpe, minicpm5, qwen2, bailingmoe, laguna, "
      "qwen35, ufakzeka, seed-coder, exaone-moe, jais-2, superbpe, gpt-4o, tekken, deepseek-v3, spark2_5, "
      "deepseek-coder, deepseek-llm, tiny_aya, youtu, kimi-k2, afmoe, gemma4, sarvam-moe, granite-embed-multi-97m, "
      "chameleon, falcon, bloom, viking, default and aliases)");
}

}  // namespace wisp
