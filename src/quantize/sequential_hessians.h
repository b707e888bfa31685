// `wisp quantize --gptq --gptq-sequential`: each layer's Hessians from the *partly quantized*
// model's activations (the GPTQ paper's sequential order) instead of the source model's.
//
// For layer L the calibration tokens run through the source model with every weight of layers
// < L that the converter has already written swapped in (its quantized bytes and outlier table,
// through the matmul observer's substitute(): the model's own kernels, so the activations are
// those the output file will produce), and H = 2/N X^T X of each input of layer L is summed as
// the rows go by (streaming: no activation rows are kept). The pass stops at the first matmul past
// layer L, so layer L costs (L + 1) / n_layer of a forward pass over the calibration tokens: all
// layers together about n_layer / 2 forward passes (a one-pass alternative would run layers one at
// a time from saved hidden states, which the Transformer does not expose). Within a layer the
// inputs come from the source weights of that layer (q/k/v, attn_output, gate/up and ffn_down in
// one pass), as the paper does.
//
// Only weights the forward pass multiplies are swapped in; token_embd is looked up from the
// source (the converter keeps it at 8 bits by default), norms are the source's. AWQ-transformed
// tensors are refused (their folded norms would have to be swapped in too).
//
// Memory: the quantized bytes of every block weight written so far (at most the output file's
// tensor data), the accumulators of one layer's inputs (n^2 doubles per distinct input: q/k/v
// share one, gate/up share one), one window's activations, the source model's mapping.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "kernels/matmul.h"
#include "kernels/sparse_add.h"
#include "quantize/gptq.h"
#include "quantize/outliers.h"
#include "wisp/model.h"

namespace wisp::quantize {

struct SequentialCalib {
  std::string model_path;            // the runnable source GGUF (the converter's input)
  std::vector<std::int32_t> tokens;  // the calibration tokens (BOS first)
  std::int64_t n_ctx = 512;          // window length, each from an empty cache
  std::int32_t bos = -1;             // when >= 0, each window's first token is set to it
};

class SequentialHessians {
 public:
  SequentialHessians(SequentialCalib calib, int n_threads, std::FILE* log);
  ~SequentialHessians();
  SequentialHessians(const SequentialHessians&) = delete;
  SequentialHessians& operator=(const SequentialHessians&) = delete;

  // The block index L of a tensor named "blk.L.…", else -1.
  static std::int64_t layer_of(const std::string& name);

  // H = 2/N X^T X of the rows `name` (a weight of layer L) is multiplied with, when layers < L run
  // with what record() got. Runs layer L's calibration pass on first use; asking for an earlier
  // layer than the last pass is an error (the layers must come in order). Throws wisp::Error when
  // the forward pass never multiplies `name`.
  std::vector<double> hessian(const std::string& name);

  // The converter wrote `name` as `bytes` of `type` (with its outlier table, if any): later passes
  // multiply with it. Bytes are copied.
  void record(const std::string& name, const BlockTypeInfo& type, std::span<const std::uint8_t> bytes,
              const OutlierTable* sparse);

  int passes() const { return passes_; }
  std::int64_t n_tokens() const { return static_cast<std::int64_t>(calib_.tokens.size()); }

 private:
  struct Swapped {
    std::vector<std::uint8_t> bytes;
    std::vector<std::uint32_t> rowptr;
    std::vector<std::uint16_t> idx16, val;
    std::vector<std::uint32_t> idx32;
    kernels::SparseRows sparse;
    kernels::MatrixView view;
  };
  class Observer;
  void run_layer(std::int64_t layer);

  SequentialCalib calib_;
  int n_threads_;
  std::FILE* log_;
  std::shared_ptr<const Model> model_;
  std::unique_ptr<Observer> obs_;
  std::map<const std::uint8_t*, std::unique_ptr<Swapped>> swapped_;  // by the source tensor's data
  std::int64_t layer_ = -1;                                          // the layer of the last pass
  std::map<std::string, std::shared_ptr<HessianAccumulator>> acc_;   // that layer's inputs
  int passes_ = 0;
};

}  // namespace wisp::quantize
