// AWQ-style salient-channel scaling (`wisp quantize --calib FILE --awq`, docs/quantization.md).
//
// For a weight W multiplied with activations x, per input channel j a scale s_j > 0 is applied as
//   W x = (W diag(s)) (diag(s)^-1 x),
// the weight columns multiplied by s_j before quantizing and 1/s_j folded into the op that
// produces x, so the float model is unchanged and only the rounding moves: channels with large
// activations (salient) get larger weight columns, hence a smaller relative rounding error where
// it matters most. s_j = (mean |x_j|)^alpha, alpha searched on a grid per layer group to minimise
// the output error || W x - Q(W diag(s)) diag(s)^-1 x ||^2 over sampled calibration rows.
//
// Groups per layer and where 1/s is folded (every fold is exact in real arithmetic):
//   attn_q/k/v (one s: they share their input)  -> attn_norm.weight (gemma stores 1 + w: a multiply all the same)
//   ffn_gate/ffn_up (one s)                     -> ffn_norm.weight
//   ffn_down                                    -> rows of ffn_up (act(gate) * up is linear in up)
//   attn_output                                 -> rows of attn_v (and attn_v.bias): o's column
//     h*head_dim + d reads v's row (h / (n_head/n_head_kv))*head_dim + d, so under grouped-query
//     attention the q heads sharing a kv head get one scale (their mean |x|, averaged)
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "model/activation_stats.h"
#include "quantize/row_quantizer.h"
#include "quantize/source.h"
#include "quantize/type_policy.h"

namespace wisp::quantize {

// What to multiply a source tensor by as it is read: element (r, j) times row_scale[r] times
// col_scale[j] (either may be empty: 1). 1-D tensors (norms, biases) have only col_scale.
struct TensorTransform {
  std::vector<float> col_scale;
  std::vector<float> row_scale;
};

struct AwqOptions {
  float fixed_alpha = -1.0f;          // >= 0: use this alpha for every group instead of searching
  int grid = 11;                      // alphas 0, 1/(grid-1), ..., 1
  std::int64_t max_weight_rows = 64;  // weight rows per tensor in the search (evenly spaced)
  std::int64_t max_act_rows = 128;    // calibration rows in the search
  bool range_search = false;          // the quantizer the search emulates (as the final one will run)
  bool use_importance = false;        // weight the range search by mean x^2 as the final run does
  int n_threads = 1;
  std::FILE* log = nullptr;
};

struct AwqGroup {
  std::string name;  // "blk.3.attn_qkv"
  float alpha = 0;
  double err_plain = 0;  // output error at alpha = 0 (no scaling)
  double err_best = 0;
};

struct AwqPlan {
  std::map<std::string, TensorTransform> transforms;  // by tensor name
  std::vector<AwqGroup> groups;
};

// Searches the scales of every group the source and the statistics have. Tensors whose chosen
// type is not lossy (F32/F16/BF16) are left alone unless fixed_alpha is set (tests use that to
// check the folding is exact). Throws wisp::Error naming a tensor whose statistics do not fit it.
AwqPlan plan_awq(const Source& src, const model::ActivationStats& stats, const TypePolicy& policy,
                 const AwqOptions& opt);

// Applies a transform to row r of tensor `t` (n = t.ne[0] values) in place.
void apply_transform(const TensorTransform& tr, std::int64_t r, float* row, std::int64_t n);

}  // namespace wisp::quantize

namespace wisp::quantize {

// Per-input-channel importance from the statistics: mean x_j^2, divided by s_j^2 where AWQ
// scaled column j by s_j (the scaled weight's input is x / s). By tensor name.
std::map<std::string, std::vector<float>> calibration_importance(const model::ActivationStats& stats,
                                                                 const AwqPlan& plan);

// The source's tensors with the plan's transforms applied as rows are read.
std::vector<SourceTensor> transformed_tensors(const std::vector<SourceTensor>& tensors, const AwqPlan& plan);

}  // namespace wisp::quantize
