// The converter pipeline: read a source (GGUF or HF folder), choose a type per tensor, quantize
// row by row on several threads, and stream the result into a GGUF written to a temporary file
// and renamed when complete (formats/gguf_writer.h), so a failed run leaves no partial output.
#pragma once

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "model/activation_stats.h"
#include "quantize/gptq.h"
#include "quantize/sequential_hessians.h"
#include "quantize/row_quantizer.h"
#include "quantize/type_policy.h"

namespace wisp::quantize {

struct ConvertOptions {
  std::string input;
  std::string output;
  TypePolicy policy;
  bool range_search = false;
  // --target-bpw: > 0 chooses every tensor's type from measured errors so the tensor data averages
  // at most this many bits per weight (quantize/target_bpw.h); policy.base then only names the run.
  double target_bpw = 0;
  // Per-input-channel importance by tensor name (from --calib statistics); weights the error of
  // the range search for the WQ types.
  std::map<std::string, std::vector<float>> importance;
  // --calib: activation statistics of the source (quantize/calibration.h). Their mean x^2 per
  // input channel becomes the importance of every tensor not in `importance`.
  std::shared_ptr<const model::ActivationStats> calib;
  bool awq = false;         // --awq: salient-channel scaling from `calib` (quantize/awq.h)
  float awq_alpha = -1.0f;  // >= 0: that alpha for every group instead of the search
  // --gptq: WQ tensors with calibration rows quantized by GPTQ (quantize/gptq.h); needs `calib`
  // collected with every row kept (CalibOptions::keep_all_rows).
  bool gptq = false;
  GptqOptions gptq_opt;
  // --gptq-sequential: with gptq, each layer's Hessians from the partly quantized model run over
  // these tokens (quantize/sequential_hessians.h) instead of from `calib`'s rows; not with awq.
  std::shared_ptr<const SequentialCalib> sequential;
  double outlier_fraction = 0;  // --outliers: sparse full-precision outliers per row (quantize/outliers.h)
  int n_threads = 0;            // 0: hardware threads
  bool verbose = false;         // per-tensor error statistics
  std::FILE* log = stderr;      // progress; nullptr for silence
};

struct TensorReport {
  std::string name;
  std::string type;
  std::string reason;
  std::int64_t n_elements = 0;
  std::uint64_t bytes = 0;
  ErrorStats error;
};

struct ConvertReport {
  std::vector<TensorReport> tensors;
  std::uint64_t total_bytes = 0;  // tensor data written
  std::int64_t total_elements = 0;
  double seconds = 0;
  double bits_per_weight() const { return total_elements == 0 ? 0 : 8.0 * total_bytes / total_elements; }
};

// Runs the conversion. Throws wisp::Error (naming the file, tensor or flag) on any failure.
ConvertReport convert(const ConvertOptions& opt);

}  // namespace wisp::quantize
