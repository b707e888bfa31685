// Tokenizer metadata for a GGUF made from a Hugging Face folder: tokenizer.json (vocabulary,
// merges, added tokens, pre-tokenizer) and tokenizer_config.json (special tokens, add_bos, chat
// template), written under the tokenizer.ggml.* keys llama.cpp's converter uses.
// Only byte-level BPE ("gpt2" in GGUF terms) is supported; anything else is a clear error.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "formats/gguf_writer.h"

namespace wisp::quantize {

// `n_vocab` is the embedding's row count: ids the tokenizer lacks become "[PADn]" (unused) as in
// llama.cpp. `config_json` supplies bos/eos ids when tokenizer_config.json has none.
void write_hf_tokenizer(const std::filesystem::path& tokenizer_json,
                        const std::optional<std::filesystem::path>& tokenizer_config_json,
                        const std::filesystem::path& config_json, std::int64_t n_vocab, GgufWriter& w);

}  // namespace wisp::quantize
