// Calibration statistics: run a model over tokens and record, for every weight matrix the forward
// pass multiplies, per-input-channel statistics of the activation rows it is multiplied with
// (like llama.cpp's imatrix): mean |x_j| and mean x_j^2 over all rows, plus an evenly spaced
// sample of whole rows (the AWQ scale search measures output error on them).
// Used by `wisp quantize --calib` (src/quantize/calibration.h).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wisp/model.h"

namespace wisp::model {

struct ChannelStats {
  std::int64_t n_rows = 0;      // activation rows seen
  std::vector<double> sum_abs;  // per input channel
  std::vector<double> sum_sq;
  // Sampled rows, row-major (sample.size() / cols rows).
  std::vector<float> sample;

  std::int64_t cols() const { return static_cast<std::int64_t>(sum_abs.size()); }
  std::int64_t sample_rows() const { return cols() == 0 ? 0 : static_cast<std::int64_t>(sample.size()) / cols(); }
  std::vector<float> mean_abs() const;
  std::vector<float> mean_sq() const;
};

struct ActivationStats {
  // By weight tensor name ("blk.0.attn_q.weight"). Weights fed the same activation rows (q/k/v,
  // gate/up) share one entry.
  std::map<std::string, std::shared_ptr<ChannelStats>> by_tensor;
  std::int64_t n_tokens = 0;
  // The model's attention shape (AWQ needs it to tie scales across grouped-query heads).
  std::int64_t n_head = 0, n_head_kv = 0, head_dim = 0;

  const ChannelStats* find(const std::string& tensor) const {
    auto it = by_tensor.find(tensor);
    return it == by_tensor.end() ? nullptr : it->second.get();
  }
};

struct ActivationStatsOptions {
  std::int64_t n_ctx = 512;            // tokens per window; each window starts from an empty cache
  std::int32_t bos = -1;               // when >= 0, the first token of each window is set to it
  std::int64_t max_sample_rows = 256;  // rows kept per activation for AWQ (evenly spaced)
  int n_threads = 0;
  std::FILE* log = nullptr;  // progress per window
};

// Runs `model` over `tokens` in windows and collects the statistics. Throws wisp::Error for an
// empty token list or a token outside the vocabulary.
ActivationStats collect_activation_stats(const std::shared_ptr<const Model>& model,
                                         std::span<const std::int32_t> tokens, const ActivationStatsOptions& opt);

}  // namespace wisp::model
