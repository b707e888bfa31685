#include "model/matmul_observer.h"

namespace wisp::model {

namespace {

class ObservingBackend final : public Backend {
 public:
  ObservingBackend(Backend& inner, MatmulObserver& obs) : in_(inner), obs_(obs) {}

  ActBuffer alloc(std::int64_t rows, std::int64_t cols) override { return in_.alloc(rows, cols); }
  kernels::ggml::Simd ggml_isa() const override { return in_.ggml_isa(); }
  void read_row(Act x, std::int64_t r, std::span<float> out) override { in_.read_row(x, r, out); }
  void embed(const kernels::MatrixView& table, std::span<const std::int32_t> tokens, Act out) override {
    in_.embed(table, tokens, out);
  }
  void matmul(const kernels::MatrixView& w, Act x, Act y, const float* bias) override {
    obs_.on_matmul(w, x);
    const kernels::MatrixView* s = obs_.substitute(w);
    in_.matmul(s != nullptr ? *s : w, x, y, bias);
  }
  void rmsnorm(Act x, const float* w, float eps, Act y) override { in_.rmsnorm(x, w, eps, y); }
  void gather_rows(Act src, std::span<const std::int64_t> rows, Act dst) override { in_.gather_rows(src, rows, dst); }
  void rope(Act x, std::int64_t head_dim, std::span<const std::int64_t> positions,
            const kernels::RopeParams& p) override {
    in_.rope(x, head_dim, positions, p);
  }
  void scale(Act x, float s) override { in_.scale(x, s); }
  void add(Act x, Act y) override { in_.add(x, y); }
  void glu(FfnAct act, Act gate, Act up, Act out) override { in_.glu(act, gate, up, out); }
  void softcap(Act x, float cap) override { in_.softcap(x, cap); }
  void weighted_sum_rows(Act src, std::span<const std::int64_t> rows, std::span<const float> weights, std::int64_t k,
                         Act out) override {
    in_.weighted_sum_rows(src, rows, weights, k, out);
  }
  void store_kv(KvPool& pool, const StepBatch& batch, std::uint32_t layer, Act k, Act v,
                const KvNumerics& num) override {
    in_.store_kv(pool, batch, layer, k, v, num);
  }
  void attention(const KvPool& pool, const StepBatch& batch, std::uint32_t layer, Act q,
                 const kernels::AttentionParams& p, Act out) override {
    in_.attention(pool, batch, layer, q, p, out);
  }

 private:
  Backend& in_;
  MatmulObserver& obs_;
};

}  // namespace

std::unique_ptr<Backend> make_observing_backend(Backend& inner, MatmulObserver& obs) {
  return std::make_unique<ObservingBackend>(inner, obs);
}

}  // namespace wisp::model
