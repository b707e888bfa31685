#include "cuda/cuda_backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_kernels.h"
#include "cuda/device_kv_storage.h"
#include "cuda/device_weights.h"
#include "cuda/step_graph.h"
#include "kernels/rope.h"
#include "wisp/error.h"

namespace wisp::cuda {

namespace {

void free_device_floats(float* p) { cudaFree(p); }

// The weight matrices of a model, each checked for what the device kernels need.
void check_matrix(const kernels::MatrixView& m, const char* what) {
  if (m.data == nullptr) return;
  if (m.outliers != nullptr) {
    throw Error(std::string("cuda: ") + what +
                " has sparse full-precision outliers, which the CUDA backend does not "
                "run yet (use --device cpu)");
  }
  if (m.out_scale != nullptr) {
    throw Error(std::string("cuda: ") + what +
                " has a per-tensor factor (a .scale tensor), which the CUDA backend does not apply yet "
                "(use --device cpu)");
  }
  if (!is_float_type(m.type_id) && !is_quantized_type(m.type_id)) {
    throw Error(std::string("cuda: ") + what + " has block type id " + std::to_string(m.type_id) +
                ", which the CUDA backend does not run (use --device cpu)");
  }
  if (m.n_cols % kChunk != 0) {
    throw Error(std::string("cuda: ") + what + " has rows of " + std::to_string(m.n_cols) +
                " values, not a multiple of 32");
  }
}

// The key words of the structs the launchers take.
LaunchKey& operator<<(LaunchKey& k, const DeviceMatrix& m) {
  return k << m.data << m.type << m.n_cols << m.n_rows << m.row_bytes;
}
LaunchKey& operator<<(LaunchKey& k, const DeviceKv& kv) {
  return k << kv.pool << kv.block_bytes << kv.row_bytes << kv.n_kv_heads << kv.head_dim << kv.block_size << kv.f16
           << kv.q8_0;
}
LaunchKey& operator<<(LaunchKey& k, const DeviceAttention& a) {
  return k << a.n_heads << a.n_kv_heads << a.kq_scale << a.window << a.logit_softcap << a.round_f16;
}
LaunchKey& operator<<(LaunchKey& k, const model::Act& x) { return k << x.data << x.rows << x.cols << x.stride; }

bool env_off(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::string(v) == "0";
}

// The attention scratch holds max_keys scores per (token, head); its stride is a kernel argument,
// so it is rounded up (at least kKeySpan, then powers of two): a decode step's graph stays valid
// while its sequences grow (the stride changes no result, only where scores are kept).
constexpr std::int64_t kKeySpan = 256;
std::int64_t round_up_pow2(std::int64_t v, std::int64_t at_least) {
  std::int64_t r = at_least;
  while (r < v) r *= 2;
  return r;
}

class CudaBackend final : public model::Backend {
 public:
  CudaBackend(const detail::ModelState& m, int device, std::size_t reserve_bytes) : device_(device) {
    check(cudaSetDevice(device), "selecting the device");
    const model::ModelWeights& w = m.weights;
    check_matrix(w.tok_embd, "token_embd.weight");
    check_matrix(w.output, "output.weight");
    for (std::size_t il = 0; il < w.layers.size(); ++il) {
      const model::LayerWeights& l = w.layers[il];
      const std::string where = "layer " + std::to_string(il);
      for (const kernels::MatrixView* v : {&l.wq, &l.wk, &l.wv, &l.wo, &l.gate, &l.up, &l.down}) {
        check_matrix(*v, where.c_str());
      }
    }
    weights_ = std::make_unique<DeviceWeights>(m.file, reserve_bytes);
    // The tensor-core prefill matmul (same bits as the decode kernel, so this only changes speed);
    // WISP_CUDA_MMA=0 keeps every step on the decode kernel, to time or bisect the two.
    use_mma_ = mma_supported(device) && !env_off("WISP_CUDA_MMA");
    // CUDA graphs for decode steps (step_graph.h); WISP_CUDA_GRAPHS=0 runs every launch by itself.
    graph_ = std::make_unique<StepGraph>(!env_off("WISP_CUDA_GRAPHS"));
  }

  ~CudaBackend() override {
    // What is still recorded belongs to a step whose results nobody reads.
    graph_->discard();
    if (kv_ != nullptr) kv_->set_before_copy({});
  }

  std::unique_ptr<KvStorage> make_kv_storage(const KvLayout& layout, std::uint32_t n_blocks, bool) override {
    if (layout.type != KvType::kF16 && layout.type != KvType::kF32 && layout.type != KvType::kQ8_0) {
      throw Error("cuda: KV type " + std::string(kv_type_name(layout.type)) +
                  " is not supported on the device yet (use --kv-type f16, f32 or q8_0)");
    }
    auto s = std::make_unique<DeviceKvStorage>(layout, n_blocks);
    s->set_before_copy([this] { graph_->flush(); });
    kv_ = s.get();
    return s;
  }

  model::ActBuffer alloc(std::int64_t rows, std::int64_t cols) override {
    // A new buffer usually replaces an old one (a longer step): the recorded launches that use the
    // old one run first, and finish before it is freed.
    graph_->flush();
    check(cudaStreamSynchronize(graph_->stream()), "finishing the step");
    float* p = nullptr;
    const std::size_t bytes = static_cast<std::size_t>(rows * cols) * sizeof(float);
    check(cudaMalloc(&p, bytes), "allocating activations");
    check(cudaMemset(p, 0, bytes), "clearing activations");
    return model::ActBuffer(p, free_device_floats, rows, cols);
  }

  void read_row(model::Act x, std::int64_t r, std::span<float> out) override {
    graph_->flush();  // the step ends here: replay its graph (or run it), then wait for the row
    check(cudaMemcpy(out.data(), x.row(r), static_cast<std::size_t>(x.cols) * sizeof(float), cudaMemcpyDeviceToHost),
          "reading results");
  }

  void embed(const kernels::MatrixView& table, std::span<const std::int32_t> tokens, model::Act out) override {
    const auto* ids = static_cast<const std::int32_t*>(graph_->stage(tokens.data(), tokens.size_bytes(), "token ids"));
    const DeviceMatrix m = device_matrix(table);
    const auto n = static_cast<std::int64_t>(tokens.size());
    LaunchKey k;
    k << 1 << m << ids << n << out;
    graph_->record(k, n, [=](cudaStream_t s) { launch_embed(m, ids, n, out.data, out.stride, s); });
  }

  void matmul(const kernels::MatrixView& w, model::Act x, model::Act y, const float* bias) override {
    const MatmulTarget t{&w, y, bias};
    matmul_group(x, std::span<const MatmulTarget>(&t, 1));
  }

  void matmul_group(model::Act x, std::span<const MatmulTarget> targets) override {
    bool quantized = false;
    for (const MatmulTarget& t : targets) quantized = quantized || !is_float_type(t.w->type_id);
    ActChunk* act = nullptr;
    if (quantized) {
      // One 8-bit form of the input for every quantized weight of the group.
      reserve(act_, static_cast<std::size_t>(x.rows * (x.cols / kChunk)) * sizeof(ActChunk), "quantized activations");
      act = act_.as<ActChunk>();
      LaunchKey k;
      k << 2 << x << act;
      graph_->record(k, x.rows, [=](cudaStream_t s) { launch_quantize_act(x.data, x.stride, x.rows, x.cols, act, s); });
    }
    for (const MatmulTarget& t : targets) {
      const DeviceMatrix m = device_matrix(*t.w);
      const model::Act y = t.y;
      LaunchKey k;
      if (is_float_type(m.type)) {
        k << 3 << m << x << y;
        graph_->record(k, x.rows,
                       [=](cudaStream_t s) { launch_matmul_f(m, x.data, x.stride, x.rows, y.data, y.stride, s); });
      } else {
        const bool mma = use_mma_ && x.rows >= kMmaMinTokens;
        k << 4 << m << act << x.rows << y << mma;
        graph_->record(k, x.rows, [=](cudaStream_t s) {
          if (mma) {
            launch_matmul_q_mma(m, act, x.rows, y.data, y.stride, s);
          } else {
            launch_matmul_q(m, act, x.rows, y.data, y.stride, s);
          }
        });
      }
      if (t.bias != nullptr) {
        const float* b = device_floats(t.bias, "a bias");
        LaunchKey kb;
        kb << 5 << b << y;
        graph_->record(kb, y.rows, [=](cudaStream_t s) { launch_add_rows(b, y.data, y.stride, y.rows, y.cols, s); });
      }
    }
  }

  void rmsnorm(model::Act x, const float* w, float eps, model::Act y) override {
    const float* dw = device_floats(w, "a norm weight");
    LaunchKey k;
    k << 6 << x << dw << eps << y;
    graph_->record(k, x.rows, [=](cudaStream_t s) {
      launch_rmsnorm(x.data, x.stride, dw, eps, y.data, y.stride, x.rows, x.cols, s);
    });
  }

  void gather_rows(model::Act src, std::span<const std::int64_t> rows, model::Act dst) override {
    const auto* r = static_cast<const std::int64_t*>(graph_->stage(rows.data(), rows.size_bytes(), "row indices"));
    const auto n = static_cast<std::int64_t>(rows.size());
    LaunchKey k;
    k << 7 << src << r << n << dst;
    graph_->record(k, std::max(src.rows, n), [=](cudaStream_t s) {
      launch_gather_rows(src.data, src.stride, r, n, dst.data, dst.stride, src.cols, s);
    });
  }

  void rope(model::Act x, std::int64_t head_dim, std::span<const std::int64_t> positions,
            const kernels::RopeParams& p) override {
    // The angles on the host, by the CPU's own table function (every rope variant it knows), so
    // the device rotates by exactly the CPU's cos/sin. q and k (and layers of the same kind) share
    // one table: it is staged again only when the positions, the parameters or the segment change.
    // (Bytewise: a difference in padding only costs a copy.)
    const bool same = rope_seg_ == graph_->segment() && std::memcmp(&rope_key_, &p, sizeof p) == 0 &&
                      std::equal(positions.begin(), positions.end(), rope_pos_.begin(), rope_pos_.end());
    if (!same) {
      rope_host_.resize(static_cast<std::size_t>(x.rows * p.n_dims));
      for (std::int64_t t = 0; t < x.rows; ++t) {
        kernels::rope_table(p, positions[static_cast<std::size_t>(t)], rope_row_);
        std::copy(rope_row_.begin(), rope_row_.end(), rope_host_.begin() + t * p.n_dims);
      }
      rope_dev_ =
          static_cast<const float*>(graph_->stage(rope_host_.data(), rope_host_.size() * sizeof(float), "rope tables"));
      rope_seg_ = graph_->segment();
      rope_key_ = p;
      rope_pos_.assign(positions.begin(), positions.end());
    }
    const float* cs = rope_dev_;
    const int n_dims = p.n_dims;
    const bool neox = p.style == kernels::RopeStyle::kNeox;
    LaunchKey k;
    k << 8 << x << head_dim << n_dims << neox << cs;
    graph_->record(k, x.rows, [=](cudaStream_t s) {
      launch_rope(x.data, x.stride, x.rows, x.cols / head_dim, head_dim, n_dims, neox, cs, s);
    });
  }

  void scale(model::Act x, float v) override {
    LaunchKey k;
    k << 9 << x << v;
    graph_->record(k, x.rows, [=](cudaStream_t s) { launch_scale(x.data, x.stride, x.rows, x.cols, v, s); });
  }
  void add(model::Act x, model::Act y) override {
    LaunchKey k;
    k << 10 << x << y;
    graph_->record(k, x.rows,
                   [=](cudaStream_t s) { launch_add(x.data, x.stride, y.data, y.stride, x.rows, x.cols, s); });
  }
  void glu(model::FfnAct act, model::Act gate, model::Act up, model::Act out) override {
    if (act == model::FfnAct::kSwigluOai) throw Error("cuda: gpt-oss's clamped SwiGLU is not implemented on CUDA yet");
    const bool gelu = act != model::FfnAct::kSilu;
    LaunchKey k;
    k << 11 << gelu << gate << up << out;
    graph_->record(k, gate.rows, [=](cudaStream_t s) {
      launch_glu(gelu, gate.data, gate.stride, up.data, up.stride, out.data, out.stride, gate.rows, gate.cols, s);
    });
  }
  void weighted_sum_rows(model::Act src, std::span<const std::int64_t> rows, std::span<const float> weights,
                         std::int64_t k, model::Act out) override {
    graph_->make_room(rows.size_bytes() + weights.size_bytes() + 2 * StepGraph::kStageSlack);
    const auto* r = static_cast<const std::int64_t*>(graph_->stage(rows.data(), rows.size_bytes(), "row indices"));
    const auto* w = static_cast<const float*>(graph_->stage(weights.data(), weights.size_bytes(), "expert weights"));
    LaunchKey key;
    key << 12 << src << r << w << k << out;
    graph_->record(key, std::max(src.rows, out.rows), [=](cudaStream_t s) {
      launch_weighted_sum_rows(src.data, src.stride, r, w, k, out.data, out.stride, out.rows, out.cols, s);
    });
  }
  void softcap(model::Act x, float cap) override {
    LaunchKey k;
    k << 13 << x << cap;
    graph_->record(k, x.rows, [=](cudaStream_t s) { launch_softcap(x.data, x.stride, x.rows, x.cols, cap, s); });
  }

  void store_kv(KvPool& pool, const model::StepBatch& batch, std::uint32_t layer, model::Act k, model::Act v,
                const model::KvNumerics& num) override {
    if (layer == 0 || !step_ready(batch)) prepare_step(pool, batch);
    const DeviceKv kv = device_kv(pool);
    const std::int64_t n = batch.n_tokens();
    const auto* blk = tok_block_;
    const auto* slot = tok_slot_;
    const bool round = num.round_f16;
    LaunchKey key;
    key << 14 << kv << layer << k << v << n << blk << slot << round;
    graph_->record(key, n, [=](cudaStream_t s) {
      launch_store_kv(kv, layer, k.data, k.stride, v.data, v.stride, n, blk, slot, round, s);
    });
  }

  void attention(const KvPool& pool, const model::StepBatch& batch, std::uint32_t layer, model::Act q,
                 const kernels::AttentionParams& p, model::Act out) override {
    if (p.sinks != nullptr) throw Error("cuda: attention sinks (gpt-oss) are not implemented on CUDA yet");
    if (!step_ready(batch)) prepare_step(pool, batch);
    DeviceAttention a;
    a.n_heads = p.n_heads;
    a.n_kv_heads = p.n_kv_heads;
    a.kq_scale = p.kq_scale;
    a.window = p.window;
    a.logit_softcap = p.logit_softcap;
    a.round_f16 = p.round_f16;
    reserve(scores_, static_cast<std::size_t>(batch.n_tokens() * p.n_heads * max_keys_) * sizeof(float),
            "attention scores");
    if (!step_ready(batch)) prepare_step(pool, batch);  // growing the scratch ended the segment
    const std::int64_t n = batch.n_tokens(), max_keys = max_keys_;
    const DeviceKv kv = device_kv(pool);
    const auto* pos = tok_pos_;
    const auto* tab = tok_table_;
    const auto* tables = tables_;
    float* scores = scores_.as<float>();
    LaunchKey key;
    key << 15 << kv << layer << a << q << n << pos << tab << tables << scores << max_keys << out;
    graph_->record(key, n, [=](cudaStream_t s) {
      launch_attention(kv, layer, a, q.data, q.stride, n, pos, tab, tables, scores, max_keys, out.data, out.stride, s);
    });
  }

 private:
  // Grows a scratch buffer; the launches recorded so far may use its old memory, so they are
  // issued (and finished) first.
  void reserve(DeviceBuffer& buf, std::size_t bytes, const char* what) {
    if (bytes <= buf.size()) return;
    graph_->flush();
    check(cudaStreamSynchronize(graph_->stream()), what);
    buf.reserve(bytes, what);
  }

  DeviceMatrix device_matrix(const kernels::MatrixView& m) const {
    check_matrix(m, "a weight matrix");
    return DeviceMatrix{weights_->device(m.data, "a weight matrix"), m.type_id, m.n_cols, m.n_rows, m.row_bytes};
  }
  const float* device_floats(const float* host, const char* what) const {
    return reinterpret_cast<const float*>(weights_->device(host, what));
  }

  DeviceKv device_kv(const KvPool& pool) const {
    const KvLayout& lay = pool.layout();
    if (kv_ == nullptr) throw Error("cuda: the KV pool is not in this backend's device memory");
    DeviceKv kv;
    kv.pool = kv_->device_data();
    kv.block_bytes = lay.bytes_per_block();
    kv.row_bytes = lay.row_bytes();
    kv.n_kv_heads = lay.n_kv_heads;
    kv.head_dim = lay.head_dim;
    kv.block_size = lay.block_size;
    kv.f16 = lay.type == KvType::kF16;
    kv.q8_0 = lay.type == KvType::kQ8_0;
    return kv;
  }

  bool step_ready(const model::StepBatch& batch) const {
    return &batch == step_batch_ && step_seg_ == graph_->segment();
  }

  // Where each token of the step writes its K/V and which block table its attention reads: host
  // arrays from the pool's block tables, staged once per step (step_graph.h).
  void prepare_step(const KvPool& pool, const model::StepBatch& batch) {
    const std::size_t n = static_cast<std::size_t>(batch.n_tokens());
    const std::uint32_t bs = pool.layout().block_size;
    h_block_.resize(n);
    h_slot_.resize(n);
    h_pos_.resize(n);
    h_table_.resize(n);
    h_tables_.clear();
    std::int64_t max_keys = 1;
    for (const model::SeqRun& run : batch.runs()) {
      const std::span<const BlockId> table = pool.block_table(run.seq);
      const auto off = static_cast<std::uint32_t>(h_tables_.size());
      h_tables_.insert(h_tables_.end(), table.begin(), table.end());
      for (std::int64_t i = 0; i < run.n_tokens; ++i) {
        const auto t = static_cast<std::size_t>(run.row0 + i);
        const std::int64_t pos = run.pos0 + i;
        h_block_[t] = table[static_cast<std::size_t>(pos / bs)];
        h_slot_[t] = static_cast<std::uint32_t>(pos % bs);
        h_pos_[t] = pos;
        h_table_[t] = off;
        max_keys = std::max<std::int64_t>(max_keys, pos + 1);
      }
    }
    // Sizes that are launch arguments or staged lengths, rounded up to powers of two, so a decode
    // step's graph stays valid while its sequences grow (step_graph.h): the scores' stride (in
    // steps small enough to be graphed: a long prompt's scratch is large as it is), and the block
    // tables' length (padded with block 0, which no token reads).
    max_keys_ = batch.n_tokens() <= kGraphMaxRows ? round_up_pow2(max_keys, kKeySpan) : max_keys;
    h_tables_.resize(static_cast<std::size_t>(round_up_pow2(static_cast<std::int64_t>(h_tables_.size()), 64)), 0);
    // Room for all five first, so no flush comes between them (they are read together).
    graph_->make_room(n * (3 * sizeof(std::uint32_t) + sizeof(std::int64_t)) +
                      h_tables_.size() * sizeof(std::uint32_t) + 5 * StepGraph::kStageSlack);
    tok_block_ =
        static_cast<const std::uint32_t*>(graph_->stage(h_block_.data(), n * sizeof(std::uint32_t), "KV slots"));
    tok_slot_ = static_cast<const std::uint32_t*>(graph_->stage(h_slot_.data(), n * sizeof(std::uint32_t), "KV slots"));
    tok_pos_ = static_cast<const std::int64_t*>(graph_->stage(h_pos_.data(), n * sizeof(std::int64_t), "positions"));
    tok_table_ =
        static_cast<const std::uint32_t*>(graph_->stage(h_table_.data(), n * sizeof(std::uint32_t), "block tables"));
    tables_ = static_cast<const std::uint32_t*>(
        graph_->stage(h_tables_.data(), h_tables_.size() * sizeof(std::uint32_t), "block tables"));
    step_batch_ = &batch;
    step_seg_ = graph_->segment();
  }

  int device_;
  bool use_mma_ = false;
  std::unique_ptr<DeviceWeights> weights_;
  std::unique_ptr<StepGraph> graph_;
  DeviceKvStorage* kv_ = nullptr;  // owned by the engine's pool
  DeviceBuffer act_, scores_;
  // This step's staged arrays (valid in segment step_seg_ only).
  const std::uint32_t *tok_block_ = nullptr, *tok_slot_ = nullptr, *tok_table_ = nullptr, *tables_ = nullptr;
  const std::int64_t* tok_pos_ = nullptr;
  std::uint64_t step_seg_ = ~std::uint64_t{0};
  std::vector<float> rope_host_, rope_row_;
  const float* rope_dev_ = nullptr;
  std::uint64_t rope_seg_ = ~std::uint64_t{0};
  kernels::RopeParams rope_key_{};  // what the staged rope table was made for
  std::vector<std::int64_t> rope_pos_;
  std::vector<std::uint32_t> h_block_, h_slot_, h_table_, h_tables_;
  std::vector<std::int64_t> h_pos_;
  std::int64_t max_keys_ = kKeySpan;
  const model::StepBatch* step_batch_ = nullptr;
};

}  // namespace

std::unique_ptr<model::Backend> make_cuda_backend(const detail::ModelState& model, int device,
                                                  std::size_t reserve_bytes) {
  return std::make_unique<CudaBackend>(model, device, reserve_bytes);
}

std::vector<DeviceInfo> list_devices(std::string* why_none) {
  std::vector<DeviceInfo> out;
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why_none) *why_none = std::string("no CUDA device: ") + cudaGetErrorString(e);
    return out;
  }
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.index = i;
    d.name = prop.name;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.total_bytes = prop.totalGlobalMem;
    std::size_t free_b = 0, total_b = 0;
    if (cudaSetDevice(i) == cudaSuccess && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) d.free_bytes = free_b;
    out.push_back(d);
  }
  if (out.empty() && why_none) *why_none = "no CUDA device found";
  return out;
}

}  // namespace wisp::cuda
