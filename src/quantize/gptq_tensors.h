// The converter's GPTQ step (`wisp quantize --gptq`): which tensors get it, their Hessians from
// the calibration activations, and the factor that tensors sharing an input reuse.
//
// Two sources of Hessians (docs/quantization.md): by default the *source* model's activations,
// all collected in the one calibration pass (the calibration keeps every activation row: N tokens
// x the distinct input widths of a layer x 4 bytes, for all layers); with --gptq-sequential
// (use_sequential()) each layer's from the partly quantized model, streamed layer by layer
// (quantize/sequential_hessians.h). One Hessian is alive at a time per input group (q/k/v share
// one, gate/up share one): n^2 doubles, plus the factor (another n^2 doubles).
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "model/activation_stats.h"
#include "quantize/awq.h"
#include "quantize/gptq.h"
#include "quantize/outliers.h"
#include "quantize/row_quantizer.h"
#include "quantize/sequential_hessians.h"
#include "quantize/source.h"

namespace wisp::quantize {

class GptqTensors {
 public:
  // `tensors` are the (AWQ-transformed) tensors the converter writes; `type_of` their chosen types.
  GptqTensors(std::shared_ptr<const model::ActivationStats> stats, const AwqPlan& awq, const GptqOptions& opt,
              std::FILE* log);

  // Whether tensor `t` in `type` is quantized by GPTQ: a WQ type, a multiplied weight that is not
  // the embedding or the output projection (their calibration rows are too few), with activation
  // rows of its width.
  bool handles(const SourceTensor& t, const BlockTypeInfo& type) const;

  // Hessians from the partly quantized model instead of the calibration statistics (which still
  // decide which tensors GPTQ handles and feed --target-bpw's probes). `seq` must outlive this.
  void use_sequential(SequentialHessians* seq) { seq_ = seq; }

  // Declares that `t` will be quantized (before the first quantize()), so a shared factor is freed
  // after its last user.
  void expect(const SourceTensor& t);

  // Quantizes all rows of `t` into `out`; `sparse` (optional) gets the outlier table. When
  // `stats` is given it gets the weight error, and *out_err the Hessian-weighted relative error.
  void quantize(const SourceTensor& t, const BlockTypeInfo& type, std::span<std::uint8_t> out, OutlierTable* sparse,
                ErrorStats* stats, double* out_err);

  // The Hessian of the input that `t` is multiplied with (AWQ scaling included), 2/N X^T X: from
  // the calibration statistics, or the sequential pass when there is one.
  std::vector<double> hessian(const SourceTensor& t);

  // --target-bpw's measure of one candidate type: the Hessian-weighted relative error
  // (hessian_relative_error) of GPTQ-quantizing `rows` rows `w` of t (a sample of its rows,
  // row-major) in `type`, with k outliers per row kept apart and their f16 residuals added back --
  // the error quantize() would leave on those rows, since GPTQ's rows are independent given the
  // factor. The Hessian and factor of the input group probed last are kept for the next probe of
  // the same group (probe a group's tensors together: input_group()) until end_probes(); one
  // group's are alive at a time. Not thread-safe (the row loop itself runs on n_threads).
  double probe_error(const SourceTensor& t, const BlockTypeInfo& type, const float* w, std::int64_t rows,
                     std::int64_t k);
  void end_probes();
  // Tensors that share a Hessian (and a factor) share this key.
  const void* input_group(const SourceTensor& t) const { return stats_->find(t.name); }

 private:
  const GptqFactor& factor(const SourceTensor& t);
  std::unique_ptr<GptqFactor> make_factor(const SourceTensor& t, std::vector<double> h, const char* what) const;

  std::shared_ptr<const model::ActivationStats> stats_;
  const AwqPlan& awq_;
  GptqOptions opt_;
  std::FILE* log_;
  SequentialHessians* seq_ = nullptr;
  struct Shared {
    int users = 0;
    std::unique_ptr<GptqFactor> factor;
  };
  std::map<const model::ChannelStats*, Shared> shared_;
  struct Probe {
    const model::ChannelStats* group = nullptr;
    std::vector<double> h;  // undamped, for the error
    std::unique_ptr<GptqFactor> factor;
  };
  Probe probe_;
};

}  // namespace wisp::quantize
