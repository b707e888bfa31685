// Tokenizer metadata for a GGUF made from a Hugging Face folder: tokenizer.json (vocabulary,
// merges, added tokens, pre-tokenizer) and tokenizer_config.json (special tokens, add_bos, chat
// template), written under the tokenizer.ggml.* keys llama.cpp's converter uses.
// Two kinds: byte-level BPE from tokenizer.json ("gpt2" in GGUF terms: SmolLM, Qwen2, Llama 3) and
// SentencePiece from tokenizer.model ("llama": Gemma), as llama.cpp's converter does; anything
// else is a clear error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "formats/gguf_writer.h"

namespace wisp::quantize {

struct HfTokenizerFiles {
  std::optional<std::filesystem::path> tokenizer_json;         // tokenizer.json
  std::optional<std::filesystem::path> tokenizer_config_json;  // tokenizer_config.json
  std::optional<std::filesystem::path> sentencepiece_model;    // tokenizer.model
  std::filesystem::path config_json;                           // bos/eos ids when the above lack them
};

// `n_vocab` is the embedding's row count: ids the tokenizer lacks become "[PADn]" (unused) as in
// llama.cpp. A byte-level BPE tokenizer.json wins over tokenizer.model when both exist.
void write_hf_tokenizer(const HfTokenizerFiles& files, std::int64_t n_vocab, GgufWriter& w);

}  // namespace wisp::quantize
