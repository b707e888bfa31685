// Reads a ModelShape from a GGUF file's metadata and tensor table:
//   layers       <arch>.block_count
//   KV heads     <arch>.attention.head_count_kv (absent: head_count, i.e. no GQA)
//   head size    <arch>.attention.key_length (absent: embedding_length / head_count)
//   parameters   sum of tensor elements; weight bytes: sum of tensor bytes, as stored.
//   decode reads what one step reads of them (decode_reads.h: the chosen experts' rows).
// Per-layer head counts (arrays) are accepted when uniform; K and V head sizes must agree.
#pragma once

#include <string>

#include "formats/gguf_file.h"
#include "plan/model_shape.h"

namespace wisp::plan {

// Throws wisp::Error naming the file and key when a needed field is missing or inconsistent.
ModelShape model_shape_from_gguf(const GgufFile& file);
ModelShape model_shape_from_gguf(const std::string& path);

}  // namespace wisp::plan
