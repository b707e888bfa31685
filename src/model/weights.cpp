#include "model/weights.h"

#include <set>
#include <string>

#include "formats/block_types.h"
#include "model/outlier_tables.h"
#include "wisp/error.h"

namespace wisp::model {

namespace {

std::string shape_of(std::initializer_list<std::int64_t> ne) {
  std::string s = "[";
  for (auto it = ne.begin(); it != ne.end(); ++it) s += (it == ne.begin() ? "" : ", ") + std::to_string(*it);
  return s + "]";
}

// Looks tensors up by name, checks them, and remembers which ones were used.
class Binder {
 public:
  Binder(const GgufFile& f, std::vector<std::unique_ptr<kernels::SparseRows>>& outlier_tables)
      : f_(f), outlier_tables_(outlier_tables) {}

  // A weight matrix of n_rows rows of n_cols values (GGUF shape [n_cols, n_rows]).
  kernels::MatrixView matrix(const std::string& name, std::int64_t n_cols, std::int64_t n_rows, bool required = true,
                             bool multiplied = true) {
    const GgufTensor* t = lookup(name, required);
    if (!t) return {};
    check_shape(*t, {n_cols, n_rows});
    if (multiplied) require_matmul(name, t->type_id);
    if (n_cols % t->type->block_elems != 0) {
      fail(name,
           "has rows of " + std::to_string(n_cols) + " values, not a whole number of " + t->type->name + " blocks");
    }
    kernels::MatrixView v{t->data, t->type_id, n_cols, n_rows, t->type->row_bytes(n_cols)};
    // Only multiplied matrices may carry outliers: the embedding lookup would not add them.
    if (multiplied) v.outliers = bind_outlier_table(f_, name, n_cols, n_rows, outlier_tables_, used_);
    return v;
  }

  // A merged expert tensor, GGUF shape [n_cols, n_rows, n_expert], as one matrix of
  // n_expert * n_rows rows (expert e's rows follow expert e-1's: the layout ggml's mul_mat_id reads).
  kernels::MatrixView experts(const std::string& name, std::int64_t n_cols, std::int64_t n_rows,
                              std::int64_t n_expert) {
    const GgufTensor* t = lookup(name, true);
    check_shape(*t, {n_cols, n_rows, n_expert});
    require_matmul(name, t->type_id);
    if (n_cols % t->type->block_elems != 0) {
      fail(name,
           "has rows of " + std::to_string(n_cols) + " values, not a whole number of " + t->type->name + " blocks");
    }
    // (An outlier table for it would be left unbound, and reject_unused() names it.)
    return {t->data, t->type_id, n_cols, n_rows * n_expert, t->type->row_bytes(n_cols)};
  }

  // The optional factors of a converted checkpoint (NVFP4's second-level scales), which llama.cpp
  // binds for the matrices named `<base>.weight` of attention, the FFN, the experts and the output:
  // `<base>.scale`, F32 of n_groups values (1, or one per expert), multiplied into the product;
  // `<base>.input_scale`, of the same shape, which llama.cpp loads and does not use (nor does wisp).
  void factors(kernels::MatrixView& v, const std::string& base, std::int64_t n_groups = 1) {
    if (v.data == nullptr) return;
    v.out_scale = vector(base + ".scale", n_groups, false);
    if (v.out_scale != nullptr) v.rows_per_scale = v.n_rows / n_groups;
    vector(base + ".input_scale", n_groups, false);
  }

  // A matrix whose row ranges are used as separate matrices (rows_of): an outlier table would be
  // indexed by the whole matrix's rows, so none is allowed.
  kernels::MatrixView fused(const std::string& name, std::int64_t n_cols, std::int64_t n_rows) {
    kernels::MatrixView v = matrix(name, n_cols, n_rows);
    if (v.outliers != nullptr) fail(name, "is a fused matrix with an outlier table, which wisp cannot split");
    return v;
  }

  // An F32 vector of n values (norm weights, biases), or with n_sets > 1 an F32 matrix of n_sets
  // such vectors (GGUF shape [n, n_sets]: the merged experts' biases).
  const float* vector(const std::string& name, std::int64_t n, bool required = true, std::int64_t n_sets = 1) {
    const GgufTensor* t = lookup(name, required);
    if (!t) return nullptr;
    if (n_sets > 1) {
      check_shape(*t, {n, n_sets});
    } else {
      check_shape(*t, {n});
    }
    if (t->type_id != static_cast<std::uint32_t>(GgmlType::kF32)) {
      fail(name, std::string("has type ") + t->type->name + ", expected F32");
    }
    if (reinterpret_cast<std::uintptr_t>(t->data) % alignof(float) != 0) fail(name, "data is not 4-byte aligned");
    return reinterpret_cast<const float*>(t->data);
  }

  // Fails unless a dequant-matmul kernel exists for the type (checked at load, not mid-eval).
  void require_matmul(const std::string& name, std::uint32_t type_id) const {
    if (kernels::find_dot_kernel(type_id) == nullptr) {
      const BlockTypeInfo* t = find_block_type(type_id);
      fail(name, std::string("has type ") + (t ? t->name : "?") + ", which wisp cannot multiply yet");
    }
  }

  void reject_unused(const std::string& arch) const {
    for (const GgufTensor& t : f_.tensors()) {
      if (!used_.contains(std::string(t.name))) {
        throw Error(f_.path() + ": tensor '" + std::string(t.name) + "' is not part of the " + arch +
                    " architecture as wisp runs it (an unsupported variant of the model?)");
      }
    }
  }

 private:
  const GgufTensor* lookup(const std::string& name, bool required) {
    const GgufTensor* t = f_.find_tensor(name);
    if (!t) {
      if (required) throw Error(f_.path() + ": tensor '" + name + "' is missing");
      return nullptr;
    }
    used_.insert(name);
    return t;
  }
  void check_shape(const GgufTensor& t, std::initializer_list<std::int64_t> want) const {
    bool ok = t.n_dims <= static_cast<int>(want.size());
    int i = 0;
    for (std::int64_t w : want) ok = ok && t.ne[i++] == w;
    for (; i < kGgufMaxDims; ++i) ok = ok && t.ne[i] == 1;
    if (!ok) fail(std::string(t.name), "has shape " + t.shape_string() + ", expected " + shape_of(want));
  }
  [[noreturn]] void fail(const std::string& name, const std::string& what) const {
    throw Error(f_.path() + ": tensor '" + name + "' " + what);
  }

  const GgufFile& f_;
  std::vector<std::unique_ptr<kernels::SparseRows>>& outlier_tables_;
  std::set<std::string> used_;
};

std::string blk(std::int64_t il, const char* suffix) { return "blk." + std::to_string(il) + "." + suffix; }

}  // namespace

kernels::MatrixView rows_of(const kernels::MatrixView& m, std::int64_t r0, std::int64_t n) {
  kernels::MatrixView v = m;
  v.data = m.row(r0);
  v.n_rows = n;
  if (m.out_scale != nullptr) {
    // The view's factors: one, when it lies inside one factor's rows (q of a fused qkv), else
    // whole groups of them (an expert's rows of a merged tensor).
    const std::int64_t g0 = r0 / m.rows_per_scale;
    v.out_scale = m.out_scale + g0;
    if ((r0 + n - 1) / m.rows_per_scale == g0) {
      v.rows_per_scale = n;
    } else if (r0 % m.rows_per_scale != 0 || n % m.rows_per_scale != 0) {
      throw Error("rows " + std::to_string(r0) + ".." + std::to_string(r0 + n) +
                  " of a matrix straddle its factors' groups of " + std::to_string(m.rows_per_scale) + " rows");
    }
  }
  return v;
}

ModelWeights bind_weights(const GgufFile& file, const HParams& hp) {
  ModelWeights w;
  Binder b(file, w.outlier_tables);
  const std::int64_t d = hp.n_embd;
  // The embedding table is only read row by row (dequantized), unless it doubles as the output.
  w.tok_embd = b.matrix("token_embd.weight", d, hp.n_vocab, true, /*multiplied=*/false);
  w.output_norm = b.vector("output_norm.weight", d);
  w.output = b.matrix("output.weight", d, hp.n_vocab, /*required=*/false);
  b.factors(w.output, "output");  // (a tied output has none: its .scale would stay unused, an error)
  if (w.output.data == nullptr) {
    w.output = w.tok_embd;  // tied embeddings
    w.tied_output = true;
    b.require_matmul("token_embd.weight", w.tok_embd.type_id);
  }
  w.output_bias = b.vector("output.bias", hp.n_vocab, false);
  if (hp.arch == Arch::kLlama || hp.arch == Arch::kGranite || hp.arch == Arch::kGraniteMoe ||
      hp.arch == Arch::kSmolLM3) {
    w.rope_freqs = b.vector("rope_freqs.weight", hp.n_rot / 2, false);
  }
  if (hp.arch == Arch::kPhi3) {
    // LongRoPE: the short factors serve contexts up to the original one, the long factors beyond
    // it (the Transformer picks by the engine's context, model/transformer.h).
    w.rope_freqs = b.vector("rope_factors_short.weight", hp.n_rot / 2, false);
    w.rope_freqs_long = b.vector("rope_factors_long.weight", hp.n_rot / 2, false);
  }

  // Per-head q/k norms (gemma3, qwen3) or whole-width ones (olmo2); the norms around attention
  // and FFN as each architecture has them.
  const bool per_head_qk = hp.qk_norm && !hp.qk_norm_whole;
  const std::int64_t q_norm_n = per_head_qk ? hp.head_dim : hp.n_embd_q();
  const std::int64_t k_norm_n = per_head_qk ? hp.head_dim : hp.n_embd_kv();
  w.layers.resize(static_cast<std::size_t>(hp.n_layer));
  for (std::int64_t il = 0; il < hp.n_layer; ++il) {
    LayerWeights& l = w.layers[static_cast<std::size_t>(il)];
    if (hp.pre_norms) l.attn_norm = b.vector(blk(il, "attn_norm.weight"), d);
    if (hp.arch == Arch::kPhi3 && file.find_tensor(blk(il, "attn_qkv.weight")) != nullptr) {
      // Fused QKV (phi3's files): q, k and v are consecutive row ranges of one matrix.
      kernels::MatrixView qkv = b.fused(blk(il, "attn_qkv.weight"), d, hp.n_embd_q() + 2 * hp.n_embd_kv());
      b.factors(qkv, blk(il, "attn_qkv"));
      l.wq = rows_of(qkv, 0, hp.n_embd_q());
      l.wk = rows_of(qkv, hp.n_embd_q(), hp.n_embd_kv());
      l.wv = rows_of(qkv, hp.n_embd_q() + hp.n_embd_kv(), hp.n_embd_kv());
    } else {
      l.wq = b.matrix(blk(il, "attn_q.weight"), d, hp.n_embd_q());
      l.wk = b.matrix(blk(il, "attn_k.weight"), d, hp.n_embd_kv());
      l.wv = b.matrix(blk(il, "attn_v.weight"), d, hp.n_embd_kv());
      b.factors(l.wq, blk(il, "attn_q"));
      b.factors(l.wk, blk(il, "attn_k"));
      b.factors(l.wv, blk(il, "attn_v"));
    }
    l.wo = b.matrix(blk(il, "attn_output.weight"), hp.n_embd_q(), d);
    b.factors(l.wo, blk(il, "attn_output"));
    l.bq = b.vector(blk(il, "attn_q.bias"), hp.n_embd_q(), false);
    l.bk = b.vector(blk(il, "attn_k.bias"), hp.n_embd_kv(), false);
    l.bv = b.vector(blk(il, "attn_v.bias"), hp.n_embd_kv(), false);
    l.bo = b.vector(blk(il, "attn_output.bias"), d, false);
    if (hp.qk_norm) {
      l.q_norm = b.vector(blk(il, "attn_q_norm.weight"), q_norm_n);
      l.k_norm = b.vector(blk(il, "attn_k_norm.weight"), k_norm_n);
    }
    if (hp.post_norms) {
      l.post_attn_norm = b.vector(blk(il, "post_attention_norm.weight"), d);
      l.post_ffn_norm = b.vector(blk(il, "post_ffw_norm.weight"), d);
    }
    if (hp.attn_sinks) l.attn_sinks = b.vector(blk(il, "attn_sinks.weight"), hp.n_head);
    if (hp.arch == Arch::kGptOss) {
      // gpt-oss names its FFN input norm post_attention_norm (it follows the attention's residual).
      l.ffn_norm = b.vector(blk(il, "post_attention_norm.weight"), d);
    } else if (hp.pre_norms) {
      l.ffn_norm = b.vector(blk(il, "ffn_norm.weight"), d);
    }
    if (hp.is_moe()) {
      l.gate_inp = b.matrix(blk(il, "ffn_gate_inp.weight"), d, hp.n_expert);
      l.gate_exps = b.experts(blk(il, "ffn_gate_exps.weight"), d, hp.n_ff_exp, hp.n_expert);
      l.up_exps = b.experts(blk(il, "ffn_up_exps.weight"), d, hp.n_ff_exp, hp.n_expert);
      l.down_exps = b.experts(blk(il, "ffn_down_exps.weight"), hp.n_ff_exp, d, hp.n_expert);
      b.factors(l.gate_exps, blk(il, "ffn_gate_exps"), hp.n_expert);
      b.factors(l.up_exps, blk(il, "ffn_up_exps"), hp.n_expert);
      b.factors(l.down_exps, blk(il, "ffn_down_exps"), hp.n_expert);
      if (hp.expert_biases) {
        l.gate_inp_b = b.vector(blk(il, "ffn_gate_inp.bias"), hp.n_expert);
        l.gate_exps_b = b.vector(blk(il, "ffn_gate_exps.bias"), hp.n_ff_exp, true, hp.n_expert);
        l.up_exps_b = b.vector(blk(il, "ffn_up_exps.bias"), hp.n_ff_exp, true, hp.n_expert);
        l.down_exps_b = b.vector(blk(il, "ffn_down_exps.bias"), d, true, hp.n_expert);
      }
      if (hp.n_ff_shexp > 0) {  // the shared expert, as the dense FFN's gate/up/down
        l.gate = b.matrix(blk(il, "ffn_gate_shexp.weight"), d, hp.n_ff_shexp);
        l.up = b.matrix(blk(il, "ffn_up_shexp.weight"), d, hp.n_ff_shexp);
        l.down = b.matrix(blk(il, "ffn_down_shexp.weight"), hp.n_ff_shexp, d);
        b.factors(l.gate, blk(il, "ffn_gate_shexp"));
        b.factors(l.up, blk(il, "ffn_up_shexp"));
        b.factors(l.down, blk(il, "ffn_down_shexp"));
      }
      continue;
    }
    if (hp.fused_gate_up) {
      // Phi-3's ffn_up holds the gate rows, then the up rows (ggml_swiglu's halves).
      kernels::MatrixView gu = b.fused(blk(il, "ffn_up.weight"), d, 2 * hp.n_ff);
      b.factors(gu, blk(il, "ffn_up"));
      l.gate = rows_of(gu, 0, hp.n_ff);
      l.up = rows_of(gu, hp.n_ff, hp.n_ff);
    } else {
      l.gate = b.matrix(blk(il, "ffn_gate.weight"), d, hp.n_ff);
      l.up = b.matrix(blk(il, "ffn_up.weight"), d, hp.n_ff);
      b.factors(l.gate, blk(il, "ffn_gate"));
      b.factors(l.up, blk(il, "ffn_up"));
    }
    l.down = b.matrix(blk(il, "ffn_down.weight"), hp.n_ff, d);
    b.factors(l.down, blk(il, "ffn_down"));
  }
  b.reject_unused(hp.arch_name);
  return w;
}

}  // namespace wisp::model
