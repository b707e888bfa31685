// Reads a Vocab from a GGUF file's tokenizer.ggml.* metadata.
#pragma once

#include "formats/gguf_file.h"
#include "tokenizer/vocab.h"

namespace wisp {

// Throws wisp::Error naming the file and key when a required key is missing or has the wrong
// type, when array lengths disagree, or when tokenizer.ggml.model is not one wisp implements.
Vocab vocab_from_gguf(const GgufFile& file);

}  // namespace wisp
