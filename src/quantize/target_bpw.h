// `wisp quantize --target-bpw X`: a type per tensor so that the tensor data written averages at
// most X bits per weight (8 * bytes of every tensor, 1-D and overridden ones included, over all
// their elements), with the least measured error.
//
// For each tensor the candidates are the WQ types whose group divides its rows (bits 2..8, groups
// 32/64/128); the protected embedding/output (unless --no-protect) instead choose among the
// 6- and 8-bit WQ types, Q8_0 and F16 (every logit goes through them, and a per-tensor weight
// error understates that). Tensors that --type-override names and 1-D tensors keep the policy's
// type and only count toward the size. Each candidate's error is measured on a sample of the
// tensor's rows, quantized exactly as the converter will (range search, importance weights):
//   error = sum_j w_j (x_j - x̂_j)^2 / sum_j w_j x_j^2     (w: per-input-channel importance, or 1)
// a relative error, so tensors of different scale weigh alike: a matmul's output error relative
// to its output scales with its weight's relative error. With --gptq, the candidates GPTQ would
// quantize are measured by GPTQ instead, on the same sampled rows, by the output error on the
// calibration activations relative to the output:
//   error = sum_r e_r H e_r^T / sum_r x_r H x_r^T     (e = x - x̂, H = the input's Hessian)
// of which the importance-weighted error above is the diagonal part (importance = mean x^2 =
// diag H / 2), so tensors measured either way stay comparable. The allocation minimises the sum
// of these over tensors (bit_allocator.h).
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "quantize/bit_allocator.h"
#include "quantize/row_quantizer.h"
#include "quantize/source.h"
#include "quantize/type_policy.h"

namespace wisp::quantize {

class GptqTensors;

struct TargetBpwOptions {
  double target_bpw = 0;
  bool range_search = false;
  const std::map<std::string, std::vector<float>>* importance = nullptr;  // by tensor name
  // --outliers: eligible tensors also write a sparse side table (outliers.h); its bytes count
  // toward the budget and the measured error is that of dense + sparse.
  double outlier_fraction = 0;
  // --gptq: measure the candidates it handles by their GPTQ error (GptqTensors::probe_error).
  GptqTensors* gptq = nullptr;
  std::int64_t sample_rows = 64;  // rows per tensor the errors are measured on (evenly spaced)
  int n_threads = 1;
};

struct TensorChoice {
  const BlockTypeInfo* type = nullptr;
  std::string reason;  // "target-bpw", or the policy's reason for a fixed tensor
  double error = 0;    // measured (sampled) relative error of the chosen type; 0 for fixed ones
};

struct TargetBpwPlan {
  std::map<std::string, TensorChoice> choices;  // every tensor
  std::uint64_t bytes = 0;                      // tensor data the plan writes
  std::int64_t elements = 0;
  double bits_per_weight() const {
    return elements == 0 ? 0 : 8.0 * static_cast<double>(bytes) / static_cast<double>(elements);
  }
};

// The candidates and their measured errors (exposed for tests and --verbose).
std::vector<BitItem> target_bpw_candidates(const std::vector<SourceTensor>& tensors, const TypePolicy& policy,
                                           const TargetBpwOptions& opt);

// Throws wisp::Error when X is not above 1 or no choice of types fits (naming the smallest X that does).
TargetBpwPlan plan_target_bpw(const std::vector<SourceTensor>& tensors, const TypePolicy& policy,
                              const TargetBpwOptions& opt);

}  // namespace wisp::quantize
