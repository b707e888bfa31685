// A GGUF file as a conversion source: metadata copied over, tensors dequantized row by row through
// the block registry (any registered type, so a quantized file can be re-quantized, with a warning).
#include <filesystem>

#include "formats/gguf_file.h"
#include "quantize/source.h"
#include "wisp/error.h"

namespace wisp::quantize {

namespace {

class GgufSource final : public Source {
 public:
  explicit GgufSource(const std::string& path) : file_(GgufFile::open(path)) {
    arch_ = std::string(file_.architecture());
    if (arch_.empty()) throw Error(path + ": no general.architecture key; not a model file");
    for (const GgufTensor& t : file_.tensors()) {
      SourceTensor s;
      s.name = std::string(t.name);
      for (int d = 0; d < t.n_dims; ++d) s.ne.push_back(t.ne[d]);
      if (s.ne.empty()) s.ne.push_back(1);
      s.stored_type = t.type->name;
      s.stored_quantized = t.type->block_elems > 1;
      const GgufTensor* tp = &t;
      s.read_row = [tp](std::int64_t r, float* out) {
        tp->type->dequantize(tp->data + static_cast<std::uint64_t>(r) * tp->row_bytes(), out, tp->ne[0]);
      };
      tensors_.push_back(std::move(s));
    }
  }
  std::string description() const override { return file_.path() + " (GGUF, " + arch_ + ")"; }
  std::string architecture() const override { return arch_; }
  const std::vector<SourceTensor>& tensors() const override { return tensors_; }
  void write_metadata(GgufWriter& w) const override {
    for (const GgufKeyValue& kv : file_.metadata()) {
      if (kv.key == "general.file_type" || kv.key == "general.quantization_version" || kv.key == "general.alignment")
        continue;
      if (kv.key.starts_with("wisp.quantize.")) continue;  // describes the source, rewritten below
      w.set_value(kv.key, kv.value);
    }
  }

 private:
  GgufFile file_;
  std::string arch_;
  std::vector<SourceTensor> tensors_;
};

}  // namespace

std::unique_ptr<Source> open_gguf_source(const std::string& path) { return std::make_unique<GgufSource>(path); }

std::unique_ptr<Source> open_source(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path + ": no such file or directory");
  if (std::filesystem::is_directory(path, ec)) return open_hf_source(path);
  return open_gguf_source(path);
}

}  // namespace wisp::quantize
