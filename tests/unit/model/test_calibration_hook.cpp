// The activation-observer seam (model/matmul_observer.h, model/activation_stats.h) and the sparse
// outlier correction (kernels/sparse_add.h, model/outlier_tables.h) on tiny random models.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "formats/gguf_file.h"
#include "formats/half.h"
#include "kernels/sparse_add.h"
#include "model/activation_stats.h"
#include "tests/unit/model/tiny_model.h"
#include "wisp/error.h"
#include "wisp/model.h"

namespace wisp {
namespace {

std::vector<float> f32_tensor(const GgufFile& f, const char* name) {
  const GgufTensor& t = f.tensor(name);
  std::vector<float> v(static_cast<std::size_t>(t.n_elements()));
  std::memcpy(v.data(), t.data, v.size() * sizeof(float));
  return v;
}

TEST(CalibrationHook, CollectsExactlyTheFirstLayersInputs) {
  // Layer 0's q/k/v input is rmsnorm(embedding row) * attn_norm: computed here by hand from the
  // file's F32 tensors, independently of the forward pass, and compared with what the observer saw.
  test::TinySpec s;
  const std::string path = test::write_tiny_model(s, "calib_hook.gguf");
  auto model = Model::load(path);
  const GgufFile file = GgufFile::open(path);
  const auto embd = f32_tensor(file, "token_embd.weight");
  const auto norm = f32_tensor(file, "blk.0.attn_norm.weight");
  const std::int64_t d = s.n_embd;

  std::vector<std::int32_t> tokens;
  std::mt19937 rng(3);
  for (int i = 0; i < 40; ++i) tokens.push_back(static_cast<std::int32_t>(rng() % s.n_vocab));
  model::ActivationStatsOptions opt;
  opt.n_ctx = 16;  // windows of 16, 16, 8
  opt.bos = 7;     // the first token of every window becomes 7
  opt.max_sample_rows = 1000;
  opt.n_threads = 1;
  const model::ActivationStats st = model::collect_activation_stats(model, tokens, opt);

  std::vector<std::int32_t> seen = tokens;
  for (std::size_t i = 0; i < seen.size(); i += 16) seen[i] = 7;
  std::vector<double> sum_abs(d, 0.0), sum_sq(d, 0.0);
  std::vector<float> rows;
  for (std::int32_t tk : seen) {
    const float* e = embd.data() + tk * d;
    double ms = 0;
    for (std::int64_t j = 0; j < d; ++j) ms += static_cast<double>(e[j]) * e[j];
    const double inv = 1.0 / std::sqrt(ms / d + 1e-5);
    for (std::int64_t j = 0; j < d; ++j) {
      const double h = e[j] * inv * norm[j];
      sum_abs[j] += std::fabs(h);
      sum_sq[j] += h * h;
      rows.push_back(static_cast<float>(h));
    }
  }
  const model::ChannelStats* q = st.find("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->n_rows, 40);
  // q, k and v are multiplied with the same rows: one shared entry, counted once.
  EXPECT_EQ(st.find("blk.0.attn_k.weight"), q);
  EXPECT_EQ(st.find("blk.0.attn_v.weight"), q);
  EXPECT_NE(st.find("blk.0.ffn_gate.weight"), q);
  EXPECT_EQ(st.find("blk.0.ffn_gate.weight"), st.find("blk.0.ffn_up.weight"));
  const auto ma = q->mean_abs(), msq = q->mean_sq();
  for (std::int64_t j = 0; j < d; ++j) {
    EXPECT_NEAR(ma[j], sum_abs[j] / 40, 1e-4 * (1 + std::fabs(sum_abs[j] / 40))) << "channel " << j;
    EXPECT_NEAR(msq[j], sum_sq[j] / 40, 1e-4 * (1 + sum_sq[j] / 40)) << "channel " << j;
  }
  ASSERT_EQ(q->sample_rows(), 40);  // every row sampled (max_sample_rows >= tokens)
  for (std::size_t i = 0; i < rows.size(); ++i) ASSERT_NEAR(q->sample[i], rows[i], 1e-4f) << i;

  // Every multiplied weight was seen with its input width; the output projection (tied: token_embd)
  // once per window (only the last token's logits are computed).
  for (const char* w : {"attn_output", "ffn_down", "ffn_gate"}) {
    for (int il = 0; il < s.n_layer; ++il) {
      const auto* c = st.find("blk." + std::to_string(il) + "." + w + ".weight");
      ASSERT_NE(c, nullptr) << w;
      EXPECT_EQ(c->n_rows, 40);
      EXPECT_EQ(c->cols(), std::string(w) == "ffn_down" ? s.n_ff : d);
    }
  }
  ASSERT_NE(st.find("token_embd.weight"), nullptr);
  EXPECT_EQ(st.find("token_embd.weight")->n_rows, 3);
  EXPECT_EQ(st.n_head, s.n_head);
  EXPECT_EQ(st.n_head_kv, s.n_head_kv);
}

TEST(CalibrationHook, RejectsTokensOutsideTheVocabulary) {
  auto model = Model::load(test::write_tiny_model(test::TinySpec{}, "calib_vocab.gguf"));
  std::vector<std::int32_t> bad = {1, 2, 1000};
  EXPECT_THROW(model::collect_activation_stats(model, bad, {}), Error);
}

TEST(SparseAdd, AddsTheTableProductToEachRow) {
  // Two rows of 5 columns; row 0 has entries at columns 1 and 4, row 1 none; two tokens.
  const std::uint32_t rowptr[] = {0, 2, 2};
  const std::uint16_t idx[] = {1, 4};
  const std::uint16_t val[] = {f32_to_f16(0.5f), f32_to_f16(-2.0f)};
  kernels::SparseRows s;
  s.rowptr = rowptr;
  s.idx16 = idx;
  s.val = val;
  s.n_rows = 2;
  s.n_cols = 5;
  const float x[] = {1, 2, 3, 4, 5, /*token 1*/ -1, -2, -3, -4, -5};
  float y[] = {10, 20, /*token 1*/ 30, 40};
  kernels::sparse_add(s, x, 5, 2, y, 2);
  EXPECT_FLOAT_EQ(y[0], 10 + 0.5f * 2 - 2.0f * 5);
  EXPECT_FLOAT_EQ(y[1], 20);
  EXPECT_FLOAT_EQ(y[2], 30 + 0.5f * -2 - 2.0f * -5);
  EXPECT_FLOAT_EQ(y[3], 40);
}

TEST(OutlierTables, PartialTableIsAnErrorNamingTheTensor) {
  test::TinySpec s;
  s.extra_tensors = {"blk.0.attn_q.weight.outlier_val"};
  const std::string path = test::write_tiny_model(s, "outlier_partial.gguf");
  try {
    Model::load(path);
    FAIL() << "a partial side table loaded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_q.weight.outlier_rowptr"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wisp
