// The model's weights as views into the mapped GGUF file (no copies), bound by tensor name for
// the architecture, each checked for presence, shape and type. Every problem is a wisp::Error
// naming the file and tensor: "model.gguf: tensor 'blk.3.attn_q.weight' has shape [576, 512],
// expected [576, 576]".
#pragma once

#include <memory>
#include <vector>

#include "formats/gguf_file.h"
#include "kernels/matmul.h"
#include "kernels/sparse_add.h"
#include "model/hparams.h"

namespace wisp::model {

struct LayerWeights {
  const float* attn_norm = nullptr;
  kernels::MatrixView wq, wk, wv, wo;
  const float* bq = nullptr;  // optional biases (qwen2)
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* bo = nullptr;
  const float* q_norm = nullptr;  // per-head RMSNorm weights (gemma3)
  const float* k_norm = nullptr;
  const float* post_attn_norm = nullptr;  // gemma3
  const float* ffn_norm = nullptr;
  kernels::MatrixView gate, up, down;
  const float* post_ffn_norm = nullptr;  // gemma2/3, olmo2
  // Mixture of experts: the router (n_expert rows) and the merged experts, each seen as one
  // matrix of n_expert * n_ff_exp rows (gate, up) or n_expert * n_embd rows (down); expert e is
  // the e-th run of rows (expert_rows()).
  kernels::MatrixView gate_inp, gate_exps, up_exps, down_exps;
  // gpt-oss: the router's bias (n_expert) and the experts' biases, expert e's at e * n_ff_exp
  // (gate, up) or e * n_embd (down); the per-head attention sink logits (n_head).
  const float* gate_inp_b = nullptr;
  const float* gate_exps_b = nullptr;
  const float* up_exps_b = nullptr;
  const float* down_exps_b = nullptr;
  const float* attn_sinks = nullptr;
};

struct ModelWeights {
  kernels::MatrixView tok_embd;
  const float* output_norm = nullptr;
  kernels::MatrixView output;  // token_embd itself when the file has no output.weight (tied)
  const float* output_bias = nullptr;
  const float* rope_freqs = nullptr;       // Llama 3 frequency factors (n_rot / 2), or LongRoPE's short ones
  const float* rope_freqs_long = nullptr;  // LongRoPE's long factors (phi3), optional
  bool tied_output = false;
  std::vector<LayerWeights> layers;
  // The sparse outlier tables the MatrixViews point at (model/outlier_tables.h); empty for most files.
  std::vector<std::unique_ptr<kernels::SparseRows>> outlier_tables;
};

// Rows [r0, r0 + n) of a matrix, as a matrix of its own (rows are whole blocks, so this is a view).
kernels::MatrixView rows_of(const kernels::MatrixView& m, std::int64_t r0, std::int64_t n);

// Binds every tensor the architecture uses; a tensor the architecture does not know is an error
// too (a variant wisp cannot run correctly, such as fused QKV weights).
ModelWeights bind_weights(const GgufFile& file, const HParams& hp);

}  // namespace wisp::model
