#include "model/activation_stats.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "kv/kv_sequence.h"
#include "model/cpu_backend.h"
#include "model/kv_layout_for.h"
#include "model/matmul_observer.h"
#include "model/model_state.h"
#include "model/transformer.h"
#include "wisp/error.h"

namespace wisp::model {

std::vector<float> ChannelStats::mean_abs() const {
  std::vector<float> m(sum_abs.size());
  for (std::size_t j = 0; j < m.size(); ++j) m[j] = n_rows == 0 ? 0.0f : static_cast<float>(sum_abs[j] / n_rows);
  return m;
}

std::vector<float> ChannelStats::mean_sq() const {
  std::vector<float> m(sum_sq.size());
  for (std::size_t j = 0; j < m.size(); ++j) m[j] = n_rows == 0 ? 0.0f : static_cast<float>(sum_sq[j] / n_rows);
  return m;
}

namespace {

class StatsObserver final : public MatmulObserver {
 public:
  StatsObserver(const GgufFile& file, ActivationStats& out, std::int64_t sample_stride)
      : out_(out), stride_(std::max<std::int64_t>(1, sample_stride)) {
    for (const GgufTensor& t : file.tensors()) names_[t.data] = std::string(t.name);
  }

  void on_matmul(const kernels::MatrixView& w, Act x) override {
    auto it = names_.find(w.data);
    if (it == names_.end()) throw Error("calibration: a matmul weight is not a tensor of the model file");
    const std::string& name = it->second;
    std::shared_ptr<ChannelStats>& slot = out_.by_tensor[name];
    // The same rows as the previous matmul (q/k/v after attn_norm, gate/up after ffn_norm): share
    // that entry instead of counting and sampling them again. Compared by content, not by address,
    // so a forward pass that reuses buffers differently cannot merge unrelated inputs.
    const bool same = last_ && x.cols == last_->cols() && x.rows == last_rows_ && rows_equal(x);
    if (slot == nullptr) {
      slot = same ? last_ : std::make_shared<ChannelStats>();
    }
    if (same && slot == last_) return;  // these rows are already counted in the shared entry
    ChannelStats& s = *slot;
    if (s.sum_abs.empty()) {
      s.sum_abs.assign(static_cast<std::size_t>(x.cols), 0.0);
      s.sum_sq.assign(static_cast<std::size_t>(x.cols), 0.0);
    } else if (s.cols() != x.cols) {
      throw Error("calibration: tensor '" + name + "' was multiplied with rows of " + std::to_string(x.cols) + " and " +
                  std::to_string(s.cols()) + " values");
    }
    for (std::int64_t r = 0; r < x.rows; ++r) {
      const float* row = x.row(r);
      for (std::int64_t j = 0; j < x.cols; ++j) {
        s.sum_abs[static_cast<std::size_t>(j)] += std::fabs(row[j]);
        s.sum_sq[static_cast<std::size_t>(j)] += static_cast<double>(row[j]) * row[j];
      }
      if (s.n_rows % stride_ == 0) s.sample.insert(s.sample.end(), row, row + x.cols);
      ++s.n_rows;
    }
    // Remember these rows for the next call.
    last_ = slot;
    last_rows_ = x.rows;
    copy_.resize(static_cast<std::size_t>(x.rows * x.cols));
    for (std::int64_t r = 0; r < x.rows; ++r) {
      std::memcpy(copy_.data() + r * x.cols, x.row(r), static_cast<std::size_t>(x.cols) * sizeof(float));
    }
  }

 private:
  bool rows_equal(Act x) const {
    for (std::int64_t r = 0; r < x.rows; ++r) {
      if (std::memcmp(copy_.data() + r * x.cols, x.row(r), static_cast<std::size_t>(x.cols) * sizeof(float)) != 0) {
        return false;
      }
    }
    return true;
  }

  ActivationStats& out_;
  std::int64_t stride_;
  std::unordered_map<const std::uint8_t*, std::string> names_;
  std::shared_ptr<ChannelStats> last_;
  std::int64_t last_rows_ = 0;
  std::vector<float> copy_;
};

}  // namespace

ActivationStats collect_activation_stats(const std::shared_ptr<const Model>& model,
                                         std::span<const std::int32_t> tokens, const ActivationStatsOptions& opt) {
  if (!model) throw Error("calibration: no model given");
  if (tokens.empty()) throw Error("calibration: no tokens to run");
  const detail::ModelState& st = detail::model_state(*model);
  const HParams& hp = st.hp;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (tokens[i] < 0 || tokens[i] >= hp.n_vocab) {
      throw Error("calibration: token " + std::to_string(i) + " has id " + std::to_string(tokens[i]) +
                  ", outside the vocabulary");
    }
  }
  const std::int64_t n_ctx = std::max<std::int64_t>(1, std::min<std::int64_t>(opt.n_ctx, Transformer::kMaxBatch));
  const auto n_tok = static_cast<std::int64_t>(tokens.size());

  ActivationStats out;
  out.n_head = hp.n_head;
  out.n_head_kv = hp.n_head_kv;
  out.head_dim = hp.head_dim;
  out.n_tokens = n_tok;
  const std::int64_t stride =
      opt.max_sample_rows > 0 ? (n_tok + opt.max_sample_rows - 1) / opt.max_sample_rows : n_tok + 1;
  StatsObserver obs(st.file, out, stride);
  std::unique_ptr<Backend> cpu = make_cpu_backend(opt.n_threads, kernels::DotOrder::kGgml);
  std::unique_ptr<Backend> be = make_observing_backend(*cpu, obs);
  // An f32 cache without half rounding: calibration wants the model's own activations, and this
  // is the simplest exact setting (the rounding the f16 cache adds is not part of the weights).
  const std::uint32_t block = 16;
  KvPool pool(kv_layout_for(*model, block, KvType::kF32), static_cast<std::uint32_t>((n_ctx + block - 1) / block));
  KvSequence seq(pool);
  Transformer tf(st, *be, KvNumerics{.round_f16 = false, .batch_invariant = false});
  std::vector<float> logits(static_cast<std::size_t>(hp.n_vocab));
  std::vector<std::int32_t> window;
  for (std::int64_t b0 = 0; b0 < n_tok; b0 += n_ctx) {
    const std::int64_t n = std::min(n_ctx, n_tok - b0);
    window.assign(tokens.begin() + b0, tokens.begin() + b0 + n);
    if (opt.bos >= 0) window[0] = opt.bos;
    pool.truncate(seq.id(), 0);
    pool.append(seq.id(), static_cast<std::size_t>(n));
    // Only the last token's logits: the output projection sees one row per window (it is kept at
    // 8 bits by default; its statistics matter least).
    const std::int64_t last_row = n - 1;
    tf.forward(pool, StepBatch(seq.id(), 0, n), window, std::span(&last_row, 1), logits);
    if (opt.log) {
      std::fprintf(opt.log, "\rcalibration: %lld/%lld tokens", static_cast<long long>(b0 + n),
                   static_cast<long long>(n_tok));
      std::fflush(opt.log);
    }
  }
  if (opt.log) std::fprintf(opt.log, "\n");
  return out;
}

}  // namespace wisp::model
