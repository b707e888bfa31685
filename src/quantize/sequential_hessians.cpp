#include "quantize/sequential_hessians.h"

#include <chrono>
#include <cstring>
#include <unordered_map>

#include "kv/kv_sequence.h"
#include "model/cpu_backend.h"
#include "model/kv_layout_for.h"
#include "model/matmul_observer.h"
#include "model/model_state.h"
#include "model/transformer.h"
#include "wisp/error.h"

namespace wisp::quantize {

namespace {

// Thrown by the observer at the first matmul past the layer being collected, to end the forward
// pass there: the Transformer has no "stop after layer L", and the rest of the pass is wasted work.
struct PassDone {};

}  // namespace

class SequentialHessians::Observer final : public model::MatmulObserver {
 public:
  Observer(const GgufFile& file, std::map<const std::uint8_t*, std::unique_ptr<Swapped>>& swapped) : swapped_(swapped) {
    for (const GgufTensor& t : file.tensors()) {
      const std::string name(t.name);
      names_[t.data] = {name, layer_of(name)};
    }
  }

  void begin(std::int64_t layer, std::map<std::string, std::shared_ptr<HessianAccumulator>>* acc) {
    layer_ = layer;
    acc_ = acc;
    last_.reset();
  }

  void on_matmul(const kernels::MatrixView& w, model::Act x) override {
    auto it = names_.find(w.data);
    if (it == names_.end()) throw Error("gptq-sequential: a matmul weight is not a tensor of the model file");
    const auto& [name, layer] = it->second;
    if (layer > layer_ || layer < 0) throw PassDone{};  // past layer L (or the output projection)
    if (layer < layer_) return;
    // q/k/v (and gate/up) are multiplied with the same rows: one accumulator, counted once. By
    // content, as the calibration statistics do, so unrelated inputs are never merged.
    const bool same = last_ && x.cols == last_->n() && x.rows == last_rows_ && rows_equal(x);
    std::shared_ptr<HessianAccumulator>& slot = (*acc_)[name];
    if (!slot) slot = same ? last_ : std::make_shared<HessianAccumulator>(x.cols);
    if (slot->n() != x.cols) {
      throw Error("gptq-sequential: tensor '" + name + "' was multiplied with rows of " + std::to_string(x.cols) +
                  " and " + std::to_string(slot->n()) + " values");
    }
    if (same && slot == last_) return;
    rows_.resize(static_cast<std::size_t>(x.rows * x.cols));
    for (std::int64_t r = 0; r < x.rows; ++r) {
      std::memcpy(rows_.data() + r * x.cols, x.row(r), static_cast<std::size_t>(x.cols) * sizeof(float));
    }
    slot->add(rows_.data(), x.rows, n_threads);
    last_ = slot;
    last_rows_ = x.rows;
  }

  const kernels::MatrixView* substitute(const kernels::MatrixView& w) override {
    auto it = swapped_.find(w.data);
    return it == swapped_.end() ? nullptr : &it->second->view;
  }

  int n_threads = 1;

 private:
  bool rows_equal(model::Act x) const {
    for (std::int64_t r = 0; r < x.rows; ++r) {
      if (std::memcmp(rows_.data() + r * x.cols, x.row(r), static_cast<std::size_t>(x.cols) * sizeof(float)) != 0) {
        return false;
      }
    }
    return true;
  }

  std::map<const std::uint8_t*, std::unique_ptr<Swapped>>& swapped_;
  std::unordered_map<const std::uint8_t*, std::pair<std::string, std::int64_t>> names_;
  std::int64_t layer_ = -1;
  std::map<std::string, std::shared_ptr<HessianAccumulator>>* acc_ = nullptr;
  std::shared_ptr<HessianAccumulator> last_;
  std::int64_t last_rows_ = 0;
  std::vector<float> rows_;  // the last input's rows (contiguous, for add() and the comparison)
};

std::int64_t SequentialHessians::layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0) return -1;
  std::int64_t l = 0;
  std::size_t i = 4;
  if (i >= name.size() || name[i] < '0' || name[i] > '9') return -1;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) l = l * 10 + (name[i] - '0');
  return i < name.size() && name[i] == '.' ? l : -1;
}

SequentialHessians::SequentialHessians(SequentialCalib calib, int n_threads, std::FILE* log)
    : calib_(std::move(calib)), n_threads_(n_threads), log_(log) {
  if (calib_.tokens.empty()) throw Error("gptq-sequential: no calibration tokens");
  model_ = Model::load(calib_.model_path);
  const detail::ModelState& st = detail::model_state(*model_);
  for (std::size_t i = 0; i < calib_.tokens.size(); ++i) {
    if (calib_.tokens[i] < 0 || calib_.tokens[i] >= st.hp.n_vocab) {
      throw Error("gptq-sequential: calibration token " + std::to_string(i) + " is outside the vocabulary");
    }
  }
  obs_ = std::make_unique<Observer>(st.file, swapped_);
  obs_->n_threads = n_threads;
}

SequentialHessians::~SequentialHessians() = default;

void SequentialHessians::record(const std::string& name, const BlockTypeInfo& type, std::span<const std::uint8_t> bytes,
                                const OutlierTable* sparse) {
  const detail::ModelState& st = detail::model_state(*model_);
  const GgufTensor* src = st.file.find_tensor(name);
  if (src == nullptr || src->n_dims != 2) return;  // not a weight the forward pass multiplies
  const std::int64_t n = src->ne[0], rows = src->n_rows();
  if (bytes.size() != type.row_bytes(n) * static_cast<std::size_t>(rows)) {
    throw Error("gptq-sequential: tensor " + name + ": " + std::to_string(bytes.size()) + " bytes recorded for " +
                type.name);
  }
  auto s = std::make_unique<Swapped>();
  s->bytes.assign(bytes.begin(), bytes.end());
  s->view = kernels::MatrixView{.data = s->bytes.data(),
                                .type_id = type.id,
                                .n_cols = n,
                                .n_rows = rows,
                                .row_bytes = type.row_bytes(n),
                                .outliers = nullptr};
  if (sparse != nullptr && sparse->per_row > 0) {
    s->rowptr.resize(static_cast<std::size_t>(rows + 1));
    for (std::int64_t r = 0; r <= rows; ++r)
      s->rowptr[static_cast<std::size_t>(r)] = static_cast<std::uint32_t>(r * sparse->per_row);
    s->val = sparse->val;
    s->sparse.rowptr = s->rowptr.data();
    s->sparse.val = s->val.data();
    s->sparse.n_rows = rows;
    s->sparse.n_cols = n;
    if (sparse->narrow_idx()) {
      s->idx16.assign(sparse->idx.begin(), sparse->idx.end());
      s->sparse.idx16 = s->idx16.data();
    } else {
      s->idx32 = sparse->idx;
      s->sparse.idx32 = s->idx32.data();
    }
    s->view.outliers = &s->sparse;
  }
  swapped_[src->data] = std::move(s);
}

void SequentialHessians::run_layer(std::int64_t layer) {
  const auto t0 = std::chrono::steady_clock::now();
  const detail::ModelState& st = detail::model_state(*model_);
  acc_.clear();  // the previous layer's n^2 doubles go before this layer's arrive
  obs_->begin(layer, &acc_);
  const std::int64_t n_ctx =
      std::max<std::int64_t>(1, std::min<std::int64_t>(calib_.n_ctx, model::Transformer::kMaxBatch));
  const auto n_tok = static_cast<std::int64_t>(calib_.tokens.size());
  // The calibration statistics' settings (model/activation_stats.cpp): llama.cpp's float order, an
  // f32 cache without half rounding, so layer 0 sees exactly the rows the source calibration saw.
  std::unique_ptr<model::Backend> cpu = model::make_cpu_backend(n_threads_, kernels::DotOrder::kGgml);
  std::unique_ptr<model::Backend> be = model::make_observing_backend(*cpu, *obs_);
  const std::uint32_t block = 16;
  KvPool pool(model::kv_layout_for(*model_, block, KvType::kF32),
              static_cast<std::uint32_t>((n_ctx + block - 1) / block));
  KvSequence seq(pool);
  model::Transformer tf(st, *be, model::KvNumerics{.round_f16 = false, .batch_invariant = false});
  std::vector<float> logits(static_cast<std::size_t>(st.hp.n_vocab));
  std::vector<std::int32_t> window;
  for (std::int64_t b0 = 0; b0 < n_tok; b0 += n_ctx) {
    const std::int64_t n = std::min(n_ctx, n_tok - b0);
    window.assign(calib_.tokens.begin() + b0, calib_.tokens.begin() + b0 + n);
    if (calib_.bos >= 0) window[0] = calib_.bos;
    pool.truncate(seq.id(), 0);
    pool.append(seq.id(), static_cast<std::size_t>(n));
    const std::int64_t last_row = n - 1;
    try {
      tf.forward(pool, model::StepBatch(seq.id(), 0, n), window, std::span(&last_row, 1), logits);
    } catch (const PassDone&) {
    }
  }
  layer_ = layer;
  ++passes_;
  if (log_) {
    std::fprintf(
        log_,
        "gptq-sequential: layer %lld: Hessians of %zu inputs from %lld tokens through %lld quantized layers, %.1f s\n",
        static_cast<long long>(layer), acc_.size(), static_cast<long long>(n_tok), static_cast<long long>(layer),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::fflush(log_);
  }
}

std::vector<double> SequentialHessians::hessian(const std::string& name) {
  const std::int64_t layer = layer_of(name);
  if (layer < 0) throw Error("gptq-sequential: tensor " + name + " is not a block weight (blk.N.*)");
  if (layer < layer_) {
    throw Error("gptq-sequential: tensor " + name + " comes after layer " + std::to_string(layer_) +
                "'s tensors: the layers must be quantized in order");
  }
  if (layer != layer_) run_layer(layer);
  auto it = acc_.find(name);
  if (it == acc_.end()) throw Error("gptq-sequential: tensor " + name + " was not multiplied in the calibration pass");
  return it->second->hessian();
}

}  // namespace wisp::quantize
