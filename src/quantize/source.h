// Where a conversion reads from: a list of tensors under their GGUF names, each readable row by
// row as floats, and the metadata to write. Two sources exist: a GGUF file (gguf_source.cpp) and a
// Hugging Face checkpoint folder (hf_source.cpp), which renames and reshapes tensors the way
// llama.cpp's converter does.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "formats/gguf_writer.h"

namespace wisp::quantize {

struct SourceTensor {
  std::string name;               // GGUF name ("blk.0.attn_q.weight")
  std::vector<std::int64_t> ne;   // GGUF order: ne[0] contiguous
  std::string stored_type;        // "F16", "Q4_1", ... for messages
  bool stored_quantized = false;  // re-quantizing compounds error: the converter warns
  // Reads row `r` (of ne[1]*ne[2]*ne[3]) as ne[0] floats into `out`. Thread-safe.
  std::function<void(std::int64_t r, float* out)> read_row;

  std::int64_t n_rows() const {
    std::int64_t n = 1;
    for (std::size_t i = 1; i < ne.size(); ++i) n *= ne[i];
    return n;
  }
  std::int64_t n_elements() const { return ne.empty() ? 0 : ne[0] * n_rows(); }
};

class Source {
 public:
  virtual ~Source() = default;
  virtual std::string description() const = 0;   // for the progress header
  virtual std::string architecture() const = 0;  // "llama", "qwen2", "gemma3"
  virtual const std::vector<SourceTensor>& tensors() const = 0;
  // Writes every metadata key except general.file_type and general.quantization_version.
  virtual void write_metadata(GgufWriter& w) const = 0;
};

// Opens `path`: a directory is a Hugging Face checkpoint, a file a GGUF. Throws wisp::Error.
std::unique_ptr<Source> open_source(const std::string& path);
std::unique_ptr<Source> open_gguf_source(const std::string& path);
std::unique_ptr<Source> open_hf_source(const std::string& dir);

}  // namespace wisp::quantize
