// A Hugging Face checkpoint folder as a conversion source: tensors renamed and reordered as
// llama.cpp's converter does (hf_arch.*), read row by row from the mapped safetensors (F16, BF16
// or F32), with the hyper-parameters and tokenizer written as GGUF metadata (hf_tokenizer.*).
#include <cstring>
#include <filesystem>

#include "formats/half.h"
#include "formats/hf_checkpoint.h"
#include "quantize/hf_arch.h"
#include "quantize/hf_tokenizer.h"
#include "quantize/source.h"
#include "wisp/error.h"

namespace wisp::quantize {

namespace {

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// The source row holding output row `r` under llama's Q/K reorder. HF keeps each head's rotary
// pairs as two halves (row i pairs with row i + d/2); llama.cpp's "llama" rope expects them
// adjacent (rows 2j, 2j + 1), so output row (head, j, half) comes from input row (head, half, j).
std::int64_t permuted_source_row(std::int64_t r, std::int64_t rows, std::int64_t heads) {
  const std::int64_t head_dim = rows / heads, half = head_dim / 2;
  const std::int64_t h = r / head_dim, within = r % head_dim;
  return h * head_dim + (within % 2) * half + within / 2;
}

class HfSource final : public Source {
 public:
  explicit HfSource(const std::string& dir) : ckpt_(HfCheckpoint::open(dir)), plan_(plan_hf_model(ckpt_)) {
    for (const HfTensorPlan& p : plan_.tensors) tensors_.push_back(make_tensor(p));
    tok_.tokenizer_json = ckpt_.tokenizer_json();
    tok_.tokenizer_config_json = ckpt_.tokenizer_config_json();
    if (std::filesystem::exists(ckpt_.dir() / "tokenizer.model"))
      tok_.sentencepiece_model = ckpt_.dir() / "tokenizer.model";
    tok_.config_json = ckpt_.dir() / kHfConfigFile;
    if (!tok_.tokenizer_json && !tok_.sentencepiece_model) {
      throw Error(dir + ": no tokenizer.json or tokenizer.model; a GGUF without a vocabulary cannot run");
    }
  }
  std::string description() const override {
    return ckpt_.dir().string() + " (Hugging Face " + plan_.hf_architecture + ", " + plan_.arch + ")";
  }
  std::string architecture() const override { return plan_.arch; }
  const std::vector<SourceTensor>& tensors() const override { return tensors_; }
  void write_metadata(GgufWriter& w) const override {
    write_hf_hparams(plan_, w);
    w.set_string("general.name", ckpt_.dir().filename().string());
    write_hf_tokenizer(tok_, plan_.n_vocab, w);
  }

 private:
  SourceTensor make_tensor(const HfTensorPlan& p) const {
    if (p.hf_name.empty()) {  // made from config.json (hf_arch.h)
      SourceTensor s;
      s.name = p.gguf_name;
      s.ne = {static_cast<std::int64_t>(p.generated.size())};
      s.stored_type = "F32 (from config.json)";
      s.read_row = [values = p.generated](std::int64_t, float* out) {
        std::memcpy(out, values.data(), values.size() * sizeof(float));
      };
      return s;
    }
    const SafetensorsTensor* t = ckpt_.find_tensor(p.hf_name);
    if (!t) throw Error(ckpt_.dir().string() + ": missing tensor " + p.hf_name + " (for " + p.gguf_name + ")");
    const SafetensorsFile& file = ckpt_.shard_of(p.hf_name);
    if (t->shape != p.hf_shape) {
      throw Error(file.path() + ": tensor " + p.hf_name + " has shape " + t->shape_string() + ", config.json implies " +
                  shape_str(p.hf_shape));
    }
    const GgmlType gt = file.ggml_type(*t);  // throws naming file, tensor and dtype unless F32/F16/BF16
    SourceTensor s;
    s.name = p.gguf_name;
    s.ne.assign(t->shape.rbegin(), t->shape.rend());  // GGUF lists the contiguous dimension first
    s.stored_type = t->dtype_name();
    const std::int64_t cols = s.ne[0], rows = s.n_rows();
    const std::uint8_t* data = t->data;
    const RowTransform tr = p.transform;
    const std::int64_t heads = p.permute_heads;
    if (tr == RowTransform::kPermuteHeads && (heads <= 0 || rows % heads != 0 || (rows / heads) % 2 != 0)) {
      throw Error(file.path() + ": tensor " + p.hf_name + ": " + std::to_string(rows) + " rows do not split into " +
                  std::to_string(heads) + " heads of even size");
    }
    s.read_row = [=](std::int64_t r, float* out) {
      const std::int64_t src = tr == RowTransform::kPermuteHeads ? permuted_source_row(r, rows, heads) : r;
      // Data in a safetensors file need not be aligned to the element size: memcpy each element.
      if (gt == GgmlType::kF32) {
        std::memcpy(out, data + src * cols * 4, static_cast<std::size_t>(cols) * 4);
      } else {
        const std::uint8_t* row = data + src * cols * 2;
        for (std::int64_t i = 0; i < cols; ++i) {
          std::uint16_t h;
          std::memcpy(&h, row + i * 2, 2);
          out[i] = gt == GgmlType::kF16 ? f16_to_f32(h) : bf16_to_f32(h);
        }
      }
      // In F32, not the stored 16-bit type, so 1 + w is rounded once (by the output type).
      if (tr == RowTransform::kPlusOne) {
        for (std::int64_t i = 0; i < cols; ++i) out[i] += 1.0f;
      }
    };
    return s;
  }

  HfCheckpoint ckpt_;
  HfModelPlan plan_;
  HfTokenizerFiles tok_;
  std::vector<SourceTensor> tensors_;
};

}  // namespace

std::unique_ptr<Source> open_hf_source(const std::string& dir) { return std::make_unique<HfSource>(dir); }

}  // namespace wisp::quantize
