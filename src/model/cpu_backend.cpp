#include "model/cpu_backend.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "formats/half.h"
#include "kernels/activations.h"
#include "kernels/norm.h"
#include "kernels/sparse_add.h"
#include "kv/kv_quant.h"
#include "wisp/error.h"

namespace wisp::model {

namespace {

void free_floats(float* p) { delete[] p; }

class CpuBackend final : public Backend {
 public:
  CpuBackend(int n_threads, kernels::DotOrder order, kernels::ggml::Simd isa)
      : threads_(n_threads > 0 ? n_threads : default_threads()), pool_(threads_), order_(order), isa_(isa) {}

  kernels::ggml::Simd ggml_isa() const override { return isa_; }

  ActBuffer alloc(std::int64_t rows, std::int64_t cols) override {
    return ActBuffer(new float[static_cast<std::size_t>(rows * cols)](), free_floats, rows, cols);
  }

  void read_row(Act x, std::int64_t r, std::span<float> out) override {
    std::memcpy(out.data(), x.row(r), static_cast<std::size_t>(x.cols) * sizeof(float));
  }

  void embed(const kernels::MatrixView& table, std::span<const std::int32_t> tokens, Act out) override {
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      kernels::dequantize_row(table, tokens[t], out.row(static_cast<std::int64_t>(t)));
    }
  }

  void matmul(const kernels::MatrixView& w, Act x, Act y, const float* bias) override {
    kernels::matmul(w, x.data, x.stride, x.rows, y.data, y.stride, scratch_, pool_, order_);
    finish_matmul(w, x, y, bias);
  }

  void matmul_group(Act x, std::span<const MatmulTarget> targets) override {
    std::vector<kernels::MatmulOutput> outs;
    outs.reserve(targets.size());
    for (const MatmulTarget& t : targets) outs.push_back({t.w, t.y.data, t.y.stride});
    kernels::matmul_group(outs, x.data, x.stride, x.rows, scratch_, pool_, order_);
    for (const MatmulTarget& t : targets) finish_matmul(*t.w, x, t.y, t.bias);
  }

  void rmsnorm(Act x, const float* w, float eps, Act y) override {
    pool_.parallel_for(x.rows > 16 ? x.rows : 1, [&](std::int64_t b, std::int64_t e) {
      if (x.rows <= 16) e = x.rows;  // a few rows: not worth waking the pool
      for (std::int64_t r = b; r < e; ++r) kernels::rmsnorm(x.row(r), w, y.row(r), x.cols, eps);
    });
  }

  void gather_rows(Act src, std::span<const std::int64_t> rows, Act dst) override {
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::memcpy(dst.row(static_cast<std::int64_t>(i)), src.row(rows[i]),
                  static_cast<std::size_t>(src.cols) * sizeof(float));
    }
  }

  void rope(Act x, std::int64_t head_dim, std::span<const std::int64_t> positions,
            const kernels::RopeParams& p) override {
    for (std::int64_t t = 0; t < x.rows; ++t) {
      kernels::rope_table(p, positions[static_cast<std::size_t>(t)], rope_table_);
      kernels::rope_apply(p, rope_table_, x.row(t), x.cols / head_dim, head_dim);
    }
  }

  void scale(Act x, float s) override {
    for (std::int64_t r = 0; r < x.rows; ++r) kernels::scale(x.row(r), x.cols, s);
  }

  void add(Act x, Act y) override {
    for (std::int64_t r = 0; r < x.rows; ++r) kernels::add(x.row(r), y.row(r), x.cols);
  }

  void glu(FfnAct act, Act gate, Act up, Act out) override {
    pool_.parallel_for(gate.rows, [&](std::int64_t b, std::int64_t e) {
      for (std::int64_t r = b; r < e; ++r) {
        if (act == FfnAct::kSilu) {
          kernels::silu_mul(gate.row(r), up.row(r), out.row(r), gate.cols, isa_);
        } else if (act == FfnAct::kSwigluOai) {
          kernels::swiglu_oai_mul(gate.row(r), up.row(r), out.row(r), gate.cols);
        } else {
          kernels::gelu_tanh_mul(gate.row(r), up.row(r), out.row(r), gate.cols);
        }
      }
    });
  }

  void weighted_sum_rows(Act src, std::span<const std::int64_t> rows, std::span<const float> weights, std::int64_t k,
                         Act out) override {
    // Each product is rounded before it is added (ggml_mul, then ggml_add): the out-of-line
    // kernels keep the compiler from fusing the two into one multiply-add.
    const auto n = static_cast<std::size_t>(out.cols);
    wsum_buf_.resize(n);
    for (std::int64_t t = 0; t < out.rows; ++t) {
      float* o = out.row(t);
      for (std::int64_t s = 0; s < k; ++s) {
        const auto i = static_cast<std::size_t>(t * k + s);
        float* dst = s == 0 ? o : wsum_buf_.data();
        std::memcpy(dst, src.row(rows[i]), n * sizeof(float));
        kernels::scale(dst, out.cols, weights[i]);
        if (s > 0) kernels::add(dst, o, out.cols);
      }
    }
  }

  void softcap(Act x, float cap) override {
    for (std::int64_t r = 0; r < x.rows; ++r) kernels::softcap(x.row(r), x.cols, cap);
  }

  void store_kv(KvPool& pool, const StepBatch& batch, std::uint32_t layer, Act k, Act v,
                const KvNumerics& num) override {
    const auto width = static_cast<std::size_t>(k.cols);
    kbuf_.resize(width);
    vbuf_.resize(width);
    for (const SeqRun& run : batch.runs()) {
      for (std::int64_t i = 0; i < run.n_tokens; ++i) {
        const float* kr = k.row(run.row0 + i);
        const float* vr = v.row(run.row0 + i);
        if (num.round_f16 && pool.layout().type == KvType::kF32) {
          // An f32 pool emulating an F16 cache: the values rounded to half. (Pools of f16, q8_0
          // and q4 encode the rows themselves.)
          for (std::size_t e = 0; e < width; ++e) {
            kbuf_[e] = f16_to_f32(f32_to_f16(kr[e]));
            vbuf_[e] = f16_to_f32(f32_to_f16(vr[e]));
          }
          kr = kbuf_.data();
          vr = vbuf_.data();
        }
        pool.write(run.seq, layer, static_cast<std::size_t>(run.pos0 + i), {kr, width}, {vr, width});
      }
    }
  }

  void attention(const KvPool& pool, const StepBatch& batch, std::uint32_t layer, Act q,
                 const kernels::AttentionParams& params, Act out) override {
    // The softmax's exp and the dot lanes of this backend's ggml build (kAvx512 unless exact).
    kernels::AttentionParams p = params;
    p.isa = isa_;
    const KvLayout& lay = pool.layout();
    const std::span<const SeqRun> runs = batch.runs();
    // Every run's block pointers first (the segments' spans point into these vectors), then one
    // parallel job over all of the step's queries.
    std::size_t n_blocks = 0;
    for (const SeqRun& run : runs) n_blocks += pool.block_table(run.seq).size();
    if (lay.type != KvType::kF32) {
      // Coded rows (f16, q8_0, q4): the kernel decodes the rows as it reads them (f16 ones in place).
      kcoded_.resize(n_blocks);
      vcoded_.resize(n_blocks);
      coded_segs_.clear();
      std::size_t at = 0;
      for (const SeqRun& run : runs) {
        const std::span<const BlockId> table = pool.block_table(run.seq);
        for (std::size_t i = 0; i < table.size(); ++i) {
          kcoded_[at + i] = pool.plane_data(table[i], layer, KvKind::kKey, 0);
          vcoded_[at + i] = pool.plane_data(table[i], layer, KvKind::kValue, 0);
        }
        kernels::PagedKvRows kv;
        kv.k_blocks = std::span<const std::byte* const>(kcoded_.data() + at, table.size());
        kv.v_blocks = std::span<const std::byte* const>(vcoded_.data() + at, table.size());
        kv.block_size = lay.block_size;
        kv.head_dim = lay.head_dim;
        kv.row_bytes = static_cast<std::int64_t>(lay.row_bytes());
        kv.head_stride = static_cast<std::int64_t>(lay.plane_bytes());
        kv.decode = kv_row_decoder(lay.type);
        coded_segs_.push_back({q.row(run.row0), q.stride, run.n_tokens, run.pos0, kv, out.row(run.row0), out.stride});
        at += table.size();
      }
      kernels::attention(coded_segs_, p, pool_);
      return;
    }
    kblocks_.resize(n_blocks);
    vblocks_.resize(n_blocks);
    f32_segs_.clear();
    std::size_t at = 0;
    for (const SeqRun& run : runs) {
      const std::span<const BlockId> table = pool.block_table(run.seq);
      for (std::size_t i = 0; i < table.size(); ++i) {
        kblocks_[at + i] = pool.keys(table[i], layer, 0);
        vblocks_[at + i] = pool.values(table[i], layer, 0);
      }
      kernels::PagedKv kv;
      kv.k_blocks = std::span<const float* const>(kblocks_.data() + at, table.size());
      kv.v_blocks = std::span<const float* const>(vblocks_.data() + at, table.size());
      kv.block_size = lay.block_size;
      kv.head_dim = lay.head_dim;
      kv.head_stride = static_cast<std::int64_t>(lay.block_size) * lay.head_dim;
      f32_segs_.push_back({q.row(run.row0), q.stride, run.n_tokens, run.pos0, kv, out.row(run.row0), out.stride});
      at += table.size();
    }
    kernels::attention(f32_segs_, p, pool_);
  }

 private:
  // What follows the dense product: the sparse full-precision outliers, the tensor's factors,
  // then the bias (ggml multiplies the factor into the product before the bias is added).
  static void finish_matmul(const kernels::MatrixView& w, Act x, Act y, const float* bias) {
    if (w.outliers != nullptr) kernels::sparse_add(*w.outliers, x.data, x.stride, x.rows, y.data, y.stride);
    if (w.out_scale != nullptr) {
      for (std::int64_t t = 0; t < y.rows; ++t) {
        float* yr = y.row(t);
        for (std::int64_t r = 0; r < y.cols; ++r) yr[r] *= w.out_scale[r / w.rows_per_scale];
      }
    }
    if (bias != nullptr) {
      for (std::int64_t t = 0; t < y.rows; ++t) kernels::add(bias, y.row(t), y.cols);
    }
  }

  static int default_threads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

  int threads_;
  ThreadPool pool_;  // persistent workers for every parallel op (core/thread_pool.h)
  kernels::DotOrder order_;
  kernels::ggml::Simd isa_;
  kernels::MatmulScratch scratch_;
  std::vector<float> kbuf_, vbuf_, rope_table_, wsum_buf_;
  std::vector<const float*> kblocks_, vblocks_;
  std::vector<const std::byte*> kcoded_, vcoded_;
  std::vector<kernels::AttentionSegment<kernels::PagedKv>> f32_segs_;
  std::vector<kernels::AttentionSegment<kernels::PagedKvRows>> coded_segs_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(int n_threads, kernels::DotOrder order, kernels::ggml::Simd isa) {
  return std::make_unique<CpuBackend>(n_threads, order, isa);
}

}  // namespace wisp::model
