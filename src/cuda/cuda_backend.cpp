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
  if (!is_float_type(m.type_id) && !is_quantized_type(m.type_id)) {
    throw Error(std::string("cuda: ") + what + " has block type id " + std::to_string(m.type_id) +
                ", which the CUDA backend does not run (use --device cpu)");
  }
  if (m.n_cols % kChunk != 0) {
    throw Error(std::string("cuda: ") + what + " has rows of " + std::to_string(m.n_cols) +
                " values, not a multiple of 32");
  }
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
    const char* mma_env = std::getenv("WISP_CUDA_MMA");
    use_mma_ = mma_supported(device) && !(mma_env != nullptr && std::string(mma_env) == "0");
  }

  std::unique_ptr<KvStorage> make_kv_storage(const KvLayout& layout, std::uint32_t n_blocks, bool) override {
    if (layout.type != KvType::kF16 && layout.type != KvType::kF32) {
      throw Error("cuda: KV type " + std::string(kv_type_name(layout.type)) +
                  " is not supported on the device yet (use --kv-type f16 or f32)");
    }
    auto s = std::make_unique<DeviceKvStorage>(layout, n_blocks);
    kv_ = s.get();
    return s;
  }

  model::ActBuffer alloc(std::int64_t rows, std::int64_t cols) override {
    float* p = nullptr;
    const std::size_t bytes = static_cast<std::size_t>(rows * cols) * sizeof(float);
    check(cudaMalloc(&p, bytes), "allocating activations");
    check(cudaMemset(p, 0, bytes), "clearing activations");
    return model::ActBuffer(p, free_device_floats, rows, cols);
  }

  void read_row(model::Act x, std::int64_t r, std::span<float> out) override {
    check(cudaMemcpy(out.data(), x.row(r), static_cast<std::size_t>(x.cols) * sizeof(float), cudaMemcpyDeviceToHost),
          "reading results");
  }

  void embed(const kernels::MatrixView& table, std::span<const std::int32_t> tokens, model::Act out) override {
    const auto* ids = upload(tok_ids_, tokens.data(), tokens.size() * sizeof(std::int32_t), "token ids");
    launch_embed(device_matrix(table), static_cast<const std::int32_t*>(ids), static_cast<std::int64_t>(tokens.size()),
                 out.data, out.stride, nullptr);
  }

  void matmul(const kernels::MatrixView& w, model::Act x, model::Act y, const float* bias) override {
    const MatmulTarget t{&w, y, bias};
    matmul_group(x, std::span<const MatmulTarget>(&t, 1));
  }

  void matmul_group(model::Act x, std::span<const MatmulTarget> targets) override {
    bool quantized = false;
    for (const MatmulTarget& t : targets) quantized = quantized || !is_float_type(t.w->type_id);
    if (quantized) {
      // One 8-bit form of the input for every quantized weight of the group.
      act_.reserve(static_cast<std::size_t>(x.rows * (x.cols / kChunk)) * sizeof(ActChunk), "quantized activations");
      launch_quantize_act(x.data, x.stride, x.rows, x.cols, act_.as<ActChunk>(), nullptr);
    }
    for (const MatmulTarget& t : targets) {
      const DeviceMatrix m = device_matrix(*t.w);
      if (is_float_type(m.type)) {
        launch_matmul_f(m, x.data, x.stride, x.rows, t.y.data, t.y.stride, nullptr);
      } else {
        if (use_mma_ && x.rows >= kMmaMinTokens) {
          launch_matmul_q_mma(m, act_.as<ActChunk>(), x.rows, t.y.data, t.y.stride, nullptr);
        } else {
          launch_matmul_q(m, act_.as<ActChunk>(), x.rows, t.y.data, t.y.stride, nullptr);
        }
      }
      if (t.bias != nullptr) {
        launch_add_rows(device_floats(t.bias, "a bias"), t.y.data, t.y.stride, t.y.rows, t.y.cols, nullptr);
      }
    }
  }

  void rmsnorm(model::Act x, const float* w, float eps, model::Act y) override {
    launch_rmsnorm(x.data, x.stride, device_floats(w, "a norm weight"), eps, y.data, y.stride, x.rows, x.cols, nullptr);
  }

  void gather_rows(model::Act src, std::span<const std::int64_t> rows, model::Act dst) override {
    const auto* r = upload(gather_, rows.data(), rows.size_bytes(), "row indices");
    launch_gather_rows(src.data, src.stride, static_cast<const std::int64_t*>(r),
                       static_cast<std::int64_t>(rows.size()), dst.data, dst.stride, src.cols, nullptr);
  }

  void rope(model::Act x, std::int64_t head_dim, std::span<const std::int64_t> positions,
            const kernels::RopeParams& p) override {
    // The angles on the host, by the CPU's own table function (every rope variant it knows), so
    // the device rotates by exactly the CPU's cos/sin. q and k (and layers of the same kind) share
    // one table: it is uploaded again only when the positions or the parameters change.
    // (Bytewise: a difference in padding only costs an upload.)
    const bool same = std::memcmp(&rope_key_, &p, sizeof p) == 0 &&
                      std::equal(positions.begin(), positions.end(), rope_pos_.begin(), rope_pos_.end());
    if (same) {
      launch_rope(x.data, x.stride, x.rows, x.cols / head_dim, head_dim, p.n_dims, p.style == kernels::RopeStyle::kNeox,
                  rope_.as<const float>(), nullptr);
      return;
    }
    rope_host_.resize(static_cast<std::size_t>(x.rows * p.n_dims));
    for (std::int64_t t = 0; t < x.rows; ++t) {
      kernels::rope_table(p, positions[static_cast<std::size_t>(t)], rope_row_);
      std::copy(rope_row_.begin(), rope_row_.end(), rope_host_.begin() + t * p.n_dims);
    }
    const auto* cs = upload(rope_, rope_host_.data(), rope_host_.size() * sizeof(float), "rope tables");
    rope_key_ = p;
    rope_pos_.assign(positions.begin(), positions.end());
    launch_rope(x.data, x.stride, x.rows, x.cols / head_dim, head_dim, p.n_dims, p.style == kernels::RopeStyle::kNeox,
                static_cast<const float*>(cs), nullptr);
  }

  void scale(model::Act x, float s) override { launch_scale(x.data, x.stride, x.rows, x.cols, s, nullptr); }
  void add(model::Act x, model::Act y) override {
    launch_add(x.data, x.stride, y.data, y.stride, x.rows, x.cols, nullptr);
  }
  void glu(model::FfnAct act, model::Act gate, model::Act up, model::Act out) override {
    launch_glu(act != model::FfnAct::kSilu, gate.data, gate.stride, up.data, up.stride, out.data, out.stride, gate.rows,
               gate.cols, nullptr);
  }
  void weighted_sum_rows(model::Act src, std::span<const std::int64_t> rows, std::span<const float> weights,
                         std::int64_t k, model::Act out) override {
    const auto* r = upload(gather_, rows.data(), rows.size_bytes(), "row indices");
    const auto* w = upload(sum_weights_, weights.data(), weights.size_bytes(), "expert weights");
    launch_weighted_sum_rows(src.data, src.stride, static_cast<const std::int64_t*>(r), static_cast<const float*>(w), k,
                             out.data, out.stride, out.rows, out.cols, nullptr);
  }
  void softcap(model::Act x, float cap) override { launch_softcap(x.data, x.stride, x.rows, x.cols, cap, nullptr); }

  void store_kv(KvPool& pool, const model::StepBatch& batch, std::uint32_t layer, model::Act k, model::Act v,
                const model::KvNumerics& num) override {
    if (layer == 0 || &batch != step_batch_) prepare_step(pool, batch);
    launch_store_kv(device_kv(pool), layer, k.data, k.stride, v.data, v.stride, batch.n_tokens(),
                    tok_block_.as<std::uint32_t>(), tok_slot_.as<std::uint32_t>(), num.round_f16, nullptr);
  }

  void attention(const KvPool& pool, const model::StepBatch& batch, std::uint32_t layer, model::Act q,
                 const kernels::AttentionParams& p, model::Act out) override {
    if (&batch != step_batch_) prepare_step(pool, batch);
    DeviceAttention a;
    a.n_heads = p.n_heads;
    a.n_kv_heads = p.n_kv_heads;
    a.kq_scale = p.kq_scale;
    a.window = p.window;
    a.logit_softcap = p.logit_softcap;
    a.round_f16 = p.round_f16;
    scores_.reserve(static_cast<std::size_t>(batch.n_tokens() * p.n_heads * max_keys_) * sizeof(float),
                    "attention scores");
    launch_attention(device_kv(pool), layer, a, q.data, q.stride, batch.n_tokens(), tok_pos_.as<std::int64_t>(),
                     tok_table_.as<std::uint32_t>(), tables_.as<std::uint32_t>(), scores_.as<float>(), max_keys_,
                     out.data, out.stride, nullptr);
  }

 private:
  const void* upload(DeviceBuffer& buf, const void* host, std::size_t bytes, const char* what) {
    buf.reserve(std::max<std::size_t>(bytes, 64), what);
    if (bytes > 0) check(cudaMemcpy(buf.get(), host, bytes, cudaMemcpyHostToDevice), what);
    return buf.get();
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
    return kv;
  }

  // Where each token of the step writes its K/V and which block table its attention reads: host
  // arrays from the pool's block tables, copied to the device once per step.
  void prepare_step(const KvPool& pool, const model::StepBatch& batch) {
    const std::size_t n = static_cast<std::size_t>(batch.n_tokens());
    const std::uint32_t bs = pool.layout().block_size;
    h_block_.resize(n);
    h_slot_.resize(n);
    h_pos_.resize(n);
    h_table_.resize(n);
    h_tables_.clear();
    max_keys_ = 1;
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
        max_keys_ = std::max<std::int64_t>(max_keys_, pos + 1);
      }
    }
    upload(tok_block_, h_block_.data(), n * sizeof(std::uint32_t), "KV slots");
    upload(tok_slot_, h_slot_.data(), n * sizeof(std::uint32_t), "KV slots");
    upload(tok_pos_, h_pos_.data(), n * sizeof(std::int64_t), "positions");
    upload(tok_table_, h_table_.data(), n * sizeof(std::uint32_t), "block tables");
    upload(tables_, h_tables_.data(), h_tables_.size() * sizeof(std::uint32_t), "block tables");
    step_batch_ = &batch;
  }

  int device_;
  bool use_mma_ = false;
  std::unique_ptr<DeviceWeights> weights_;
  DeviceKvStorage* kv_ = nullptr;  // owned by the engine's pool
  DeviceBuffer act_, tok_ids_, gather_, sum_weights_, rope_, scores_;
  DeviceBuffer tok_block_, tok_slot_, tok_pos_, tok_table_, tables_;
  std::vector<float> rope_host_, rope_row_;
  kernels::RopeParams rope_key_{};  // what the uploaded rope table was made for
  std::vector<std::int64_t> rope_pos_;
  std::vector<std::uint32_t> h_block_, h_slot_, h_table_, h_tables_;
  std::vector<std::int64_t> h_pos_;
  std::int64_t max_keys_ = 1;
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
