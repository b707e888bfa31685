// Session mechanics on a small random model: the logits of a token do not depend on how the
// sequence was fed (chunks, one token at a time, more than one forward batch), on forking, on
// truncating and re-evaluating, or on sharing an engine with other sessions -- exactly, in the
// default batch-invariant numerics. With exact (llama.cpp's) numerics, batches of 2+ tokens and
// single tokens use different float orders, as in llama.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "tiny_model.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace wisp {
namespace {

std::vector<std::int32_t> random_tokens(std::size_t n, unsigned seed, int n_vocab = 100) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(0, n_vocab - 1);
  std::vector<std::int32_t> t(n);
  for (auto& x : t) x = d(rng);
  return t;
}

std::vector<float> row(std::span<const float> all, std::size_t i, std::size_t n_vocab) {
  return {all.begin() + static_cast<std::ptrdiff_t>(i * n_vocab),
          all.begin() + static_cast<std::ptrdiff_t>((i + 1) * n_vocab)};
}

class SessionTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    test::TinySpec s;
    s.arch = GetParam();
    if (s.arch == "gemma3") {
      s.head_dim = 32;
      s.sliding_window = 8;
      s.n_layer = 3;
    }
    s.tied = s.arch != "qwen2";
    model_ = Model::load(test::write_tiny_model(s, std::string("session_") + GetParam() + ".gguf"));
  }
  std::shared_ptr<const Model> model_;
};

// |got - want| <= tol * (1 + |want|) per logit; tol 0 asks for the same bits.
void expect_close(std::span<const float> got, const std::vector<float>& want, double tol, const std::string& where) {
  if (tol == 0.0) {
    ASSERT_EQ(std::vector<float>(got.begin(), got.end()), want) << where;
    return;
  }
  for (std::size_t v = 0; v < want.size(); ++v) {
    ASSERT_NEAR(got[v], want[v], tol * (1.0 + std::abs(want[v]))) << where << " logit " << v;
  }
}

// The logits of a 37-token input fed whole (eval_all), in chunks (eval_all and eval, which
// computes the last row only) and one token at a time, compared with the whole-input rows:
// chunks_tol for the chunks' last rows, single_tol for the one-token steps.
void check_splits(const std::shared_ptr<const Model>& model, bool exact, double chunks_tol, double single_tol) {
  const auto toks = random_tokens(37, 1);
  Session batched(model, {.n_ctx = 64, .n_threads = 2, .exact = exact});
  const auto all_span = batched.eval_all(toks);
  const std::vector<float> all(all_span.begin(), all_span.end());
  Session chunks(model, {.n_ctx = 64, .n_threads = 1, .exact = exact});
  Session chunks_last(model, {.n_ctx = 64, .n_threads = 1, .exact = exact});
  std::size_t at = 0;
  for (std::size_t n : {5u, 11u, 2u, 19u}) {
    const auto rows = chunks.eval_all(std::span(toks).subspan(at, n));
    const auto l = chunks_last.eval(std::span(toks).subspan(at, n));
    at += n;
    ASSERT_EQ(row(rows, n - 1, 100), row(all, at - 1, 100)) << "after " << at;
    expect_close(l, row(all, at - 1, 100), chunks_tol, "after " + std::to_string(at));
  }
  Session single(model, {.n_ctx = 64, .n_threads = 1, .exact = exact});
  for (std::size_t i = 0; i < toks.size(); ++i) {
    expect_close(single.eval(std::span(toks).subspan(i, 1)), row(all, i, 100), single_tol,
                 "token " + std::to_string(i));
  }
}

// Batch-invariant numerics: every way of splitting the input gives the same bits.
TEST_P(SessionTest, EverySplitGivesTheSameBits) { check_splits(model_, false, 0.0, 0.0); }

// Exact (llama.cpp's) numerics: like llama.cpp, a batch of 2+ tokens is multiplied in one float
// order and a single token in another (ggml's tinyBLAS vs vec_dot): results within a path do not
// depend on how the input is split (chunks of 2+ tokens: the same bits for all rows); eval()
// multiplies the output matrix by one row, in the one-token order, so its last row is close to the
// batched one; one token at a time is close too (F16 weights round the one-token activations to
// half on another path: differences reach ~1e-3 on logits near zero).
TEST_P(SessionTest, ExactNumericsBatchSplitsAgreeExactlyAndOneTokenStepsClosely) {
  check_splits(model_, true, 1e-4, 3e-3);
}

TEST_P(SessionTest, LongPromptSpansSeveralForwardBatches) {
  const auto toks = random_tokens(600, 2);  // more than one forward batch (512)
  Session b(model_, {.n_ctx = 700, .n_threads = 2});
  const auto full = b.eval_all(toks);
  const std::vector<float> full_rows(full.begin(), full.end());
  Session c(model_, {.n_ctx = 700, .n_threads = 2});
  c.eval(std::span(toks).subspan(0, 300));
  const auto rest = c.eval_all(std::span(toks).subspan(300));
  for (std::size_t i = 0; i < 300; ++i) ASSERT_EQ(row(rest, i, 100), row(full_rows, 300 + i, 100)) << i;
  Session d(model_, {.n_ctx = 700, .n_threads = 2});
  const auto last = d.eval_all(toks);
  EXPECT_EQ(row(last, 599, 100), row(full_rows, 599, 100));
}

TEST_P(SessionTest, ForkSharesPrefixAndDivergesIndependently) {
  const auto prefix = random_tokens(21, 3);  // ends inside a block: the fork copies that block
  const auto xs = random_tokens(9, 4), ys = random_tokens(13, 5);
  auto engine = Engine::create(model_, {.n_threads = 2, .kv_tokens = 256});
  Session base(engine, {.n_ctx = 64});
  base.eval(prefix);
  Session forked = base.fork();
  EXPECT_EQ(forked.n_past(), prefix.size());
  base.eval(xs);
  base.eval(xs);
  // Reference sessions that never shared anything.
  auto reference = [&](const std::vector<std::int32_t>& tail, int repeats) {
    Session s(model_, {.n_ctx = 64, .n_threads = 1});
    s.eval(prefix);
    std::span<const float> l;
    for (int r = 0; r < repeats; ++r) l = s.eval(tail);
    return std::vector<float>(l.begin(), l.end());
  };
  const auto fy = forked.eval(ys);
  EXPECT_EQ(std::vector<float>(fy.begin(), fy.end()), reference(ys, 1));
  // base evaluated xs twice above.
  const auto bx = base.eval(std::vector<std::int32_t>{xs[0]});
  Session s(model_, {.n_ctx = 64, .n_threads = 1});
  s.eval(prefix);
  s.eval(xs);
  s.eval(xs);
  const auto rx = s.eval(std::vector<std::int32_t>{xs[0]});
  EXPECT_EQ(std::vector<float>(bx.begin(), bx.end()), std::vector<float>(rx.begin(), rx.end()));
}

TEST_P(SessionTest, TruncateAndReevaluateReproduces) {
  const auto toks = random_tokens(30, 6);
  Session ref(model_, {.n_ctx = 64, .n_threads = 2});
  const auto want_span = ref.eval(toks);
  const std::vector<float> want(want_span.begin(), want_span.end());
  Session t(model_, {.n_ctx = 64, .n_threads = 2});
  t.eval(toks);
  t.truncate(17);
  EXPECT_EQ(t.n_past(), 17u);
  const auto again = t.eval(std::span(toks).subspan(17));
  EXPECT_EQ(std::vector<float>(again.begin(), again.end()), want);
}

TEST_P(SessionTest, SessionsInOneEngineDoNotInterfere) {
  auto engine = Engine::create(model_, {.n_threads = 2, .kv_tokens = 128, .block_size = 16});
  const auto ta = random_tokens(25, 7), tb = random_tokens(19, 8);
  Session a(engine, {.n_ctx = 64});
  Session b(engine, {.n_ctx = 64});
  std::vector<float> la, lb;
  // Interleave so their blocks alternate in the pool.
  for (std::size_t i = 0; i < 25; i += 5) {
    auto l = a.eval(std::span(ta).subspan(i, 5));
    la.assign(l.begin(), l.end());
    if (i < 19) {
      auto m = b.eval(std::span(tb).subspan(i, std::min<std::size_t>(5, 19 - i)));
      lb.assign(m.begin(), m.end());
    }
  }
  Session ra(model_, {.n_ctx = 64, .n_threads = 1});
  Session rb(model_, {.n_ctx = 64, .n_threads = 1});
  const auto wa = ra.eval(ta);
  EXPECT_EQ(la, std::vector<float>(wa.begin(), wa.end()));
  const auto wb = rb.eval(tb);
  EXPECT_EQ(lb, std::vector<float>(wb.begin(), wb.end()));
  EXPECT_EQ(engine->kv_capacity_tokens() - engine->kv_free_tokens(), 16u * (2 + 2));  // 25 -> 2 blocks, 19 -> 2
}

INSTANTIATE_TEST_SUITE_P(Architectures, SessionTest, ::testing::Values("llama", "qwen2", "gemma3"),
                         [](const auto& p) { return std::string(p.param); });

}  // namespace
}  // namespace wisp
