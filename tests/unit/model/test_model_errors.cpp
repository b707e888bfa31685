// Bad input gives clear errors that name what is wrong: unknown or missing architecture, a missing
// key, a missing, misshapen, mistyped or unexpected tensor; and at eval time an empty token list,
// an out-of-vocabulary id, a prompt longer than the context, an exhausted shared cache -- after
// which the session is unchanged and still usable.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tiny_model.h"
#include "wisp/error.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace wisp {
namespace {

using test::TinySpec;
using test::write_tiny_model;

// Runs f, expecting a wisp::Error whose message contains every one of `parts`.
template <typename F>
void expect_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    FAIL() << "expected a wisp::Error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "message: " << msg << "\nmissing: " << p;
  }
}

TEST(ModelErrors, ValidTinyModelLoads) {
  const auto path = write_tiny_model({}, "ok.gguf");
  auto m = Model::load(path);
  EXPECT_EQ(m->info().architecture, "llama");
  EXPECT_EQ(m->info().n_layer, 2);
  EXPECT_TRUE(m->info().tied_embeddings);
}

TEST(ModelErrors, UnknownArchitecture) {
  TinySpec s;
  s.arch = "mamba";
  const auto path = write_tiny_model(s, "mamba.gguf");
  // The message lists what wisp does run.
  expect_error([&] { Model::load(path); },
               {"mamba.gguf", "architecture 'mamba' is not supported",
                "llama, qwen2, qwen3, qwen3moe, gemma2, gemma3, phi3, smollm3, olmo2, granite, granitemoe, gpt-oss"});
}

TEST(ModelErrors, MissingArchitecture) {
  TinySpec s;
  s.drop_keys = {"general.architecture"};
  const auto path = write_tiny_model(s, "noarch.gguf");
  expect_error([&] { Model::load(path); }, {"noarch.gguf", "general.architecture"});
}

TEST(ModelErrors, MissingKey) {
  TinySpec s;
  s.drop_keys = {"embedding_length"};
  const auto path = write_tiny_model(s, "nokey.gguf");
  expect_error([&] { Model::load(path); }, {"nokey.gguf", "'llama.embedding_length' is missing"});
}

TEST(ModelErrors, InconsistentHeadCounts) {
  TinySpec s;
  s.n_head_kv = 3;  // does not divide 4
  const auto path = write_tiny_model(s, "heads.gguf");
  expect_error([&] { Model::load(path); }, {"head_count_kv", "must divide"});
}

TEST(ModelErrors, MissingTensor) {
  TinySpec s;
  s.drop_tensors = {"blk.1.ffn_up.weight"};
  const auto path = write_tiny_model(s, "missing.gguf");
  expect_error([&] { Model::load(path); }, {"missing.gguf", "tensor 'blk.1.ffn_up.weight' is missing"});
}

TEST(ModelErrors, WrongShape) {
  TinySpec s;
  s.reshape = {{"blk.0.attn_q.weight", {64, 32}}};
  const auto path = write_tiny_model(s, "shape.gguf");
  expect_error([&] { Model::load(path); },
               {"shape.gguf", "tensor 'blk.0.attn_q.weight' has shape [64, 32], expected [64, 64]"});
}

TEST(ModelErrors, WrongNormType) {
  TinySpec s;
  s.as_f16 = {"blk.0.attn_norm.weight"};
  const auto path = write_tiny_model(s, "normtype.gguf");
  expect_error([&] { Model::load(path); }, {"'blk.0.attn_norm.weight' has type F16, expected F32"});
}

TEST(ModelErrors, UnexpectedTensor) {
  TinySpec s;
  s.extra_tensors = {"blk.0.attn_qkv.weight"};
  const auto path = write_tiny_model(s, "extra.gguf");
  expect_error([&] { Model::load(path); }, {"'blk.0.attn_qkv.weight' is not part of the llama architecture"});
}

TEST(ModelErrors, FactorOfTheWrongShape) {
  TinySpec s;
  s.extra_tensors = {"blk.0.attn_q.scale"};  // 64 values where a per-tensor factor has one
  const auto path = write_tiny_model(s, "factor.gguf");
  expect_error([&] { Model::load(path); }, {"factor.gguf", "tensor 'blk.0.attn_q.scale' has shape [64], expected [1]"});
}

TEST(ModelErrors, NotAFile) {
  expect_error([&] { Model::load(::testing::TempDir() + "does-not-exist.gguf"); }, {"does-not-exist.gguf"});
}

class SessionErrors : public ::testing::Test {
 protected:
  void SetUp() override { model_ = Model::load(write_tiny_model({}, "session_errors.gguf")); }
  std::shared_ptr<const Model> model_;
};

TEST_F(SessionErrors, EmptyTokenList) {
  Session s(model_, {.n_ctx = 64, .n_threads = 1});
  expect_error([&] { s.eval(std::vector<std::int32_t>{}); }, {"empty token list"});
}

TEST_F(SessionErrors, TokenOutsideVocabulary) {
  Session s(model_, {.n_ctx = 64, .n_threads = 1});
  expect_error([&] { s.eval(std::vector<std::int32_t>{1, 2, 100}); }, {"token 2 has id 100", "[0, 100)"});
  expect_error([&] { s.eval(std::vector<std::int32_t>{-1}); }, {"id -1"});
  EXPECT_EQ(s.n_past(), 0u);
}

TEST_F(SessionErrors, PromptLongerThanContextLeavesSessionUsable) {
  Session s(model_, {.n_ctx = 20, .n_threads = 1});
  std::vector<std::int32_t> prompt(21, 5);
  expect_error([&] { s.eval(prompt); }, {"context full", "0 tokens", "21 more", "context of 20 tokens"});
  EXPECT_EQ(s.n_past(), 0u);
  prompt.resize(20);
  const auto logits = s.eval(prompt);  // exactly full is fine
  EXPECT_EQ(logits.size(), 100u);
  EXPECT_EQ(s.n_past(), 20u);
  expect_error([&] { s.eval(std::vector<std::int32_t>{1}); }, {"context full", "20 tokens", "1 more"});
  EXPECT_EQ(s.n_past(), 20u);
}

TEST_F(SessionErrors, SharedPoolExhausted) {
  auto engine = Engine::create(model_, {.n_threads = 1, .kv_tokens = 32, .block_size = 16});  // two blocks
  Session a(engine, {.n_ctx = 64});
  Session b(engine, {.n_ctx = 64});
  a.eval(std::vector<std::int32_t>(20, 3));  // takes both blocks
  EXPECT_EQ(engine->kv_free_tokens(), 0u);
  expect_error([&] { b.eval(std::vector<std::int32_t>(4, 3)); }, {"KV pool exhausted"});
  EXPECT_EQ(b.n_past(), 0u);
  a.truncate(0);  // frees the blocks
  EXPECT_EQ(b.eval(std::vector<std::int32_t>(4, 3)).size(), 100u);
}

TEST_F(SessionErrors, StepAcrossEnginesOrWithBadEntriesChangesNothing) {
  auto engine = Engine::create(model_, {.n_threads = 1, .kv_tokens = 64});
  auto other = Engine::create(model_, {.n_threads = 1, .kv_tokens = 64});
  Session a(engine, {.n_ctx = 32}), b(other, {.n_ctx = 32});
  const std::vector<std::int32_t> t{1, 2, 3}, bad{1, 100}, none;
  expect_error([&] { engine->step({{&a, t}, {&b, t}}); }, {"entry 1", "another engine"});
  expect_error([&] { engine->step({{&a, t}, {&a, t}}); }, {"entry 1", "twice"});
  expect_error([&] { engine->step({{&a, t}, {nullptr, t}}); }, {"entry 1", "no session"});
  expect_error([&] { engine->step({{&a, bad}}); }, {"entry 0", "token 1", "id 100"});
  expect_error([&] { engine->step({{&a, none}}); }, {"entry 0", "empty"});
  expect_error([&] { engine->step(std::span<const StepEntry>{}); }, {"no sessions"});
  EXPECT_EQ(a.n_past(), 0u);
  EXPECT_EQ(engine->kv_free_tokens(), engine->kv_capacity_tokens());
  // A second session that cannot get blocks undoes the first's reservation too.
  Session c(engine, {.n_ctx = 64});
  c.eval(std::vector<std::int32_t>(40, 2));  // 3 of 4 blocks
  const std::vector<std::int32_t> many(30, 4);
  expect_error([&] { engine->step({{&a, t}, {&b, many}}); }, {"another engine"});
  Session d(engine, {.n_ctx = 64});
  expect_error([&] { engine->step({{&a, t}, {&d, many}}); }, {"KV pool exhausted"});
  EXPECT_EQ(a.n_past(), 0u);
  EXPECT_EQ(d.n_past(), 0u);
  EXPECT_EQ(engine->kv_free_tokens(), 16u);
  expect_error([] { Engine::create(nullptr); }, {"no model"});
  expect_error([&] { Engine::create(model_, {.max_step_tokens = 0}); }, {"max_step_tokens 0"});
  expect_error([&] { Engine::create(model_, {.kv_type = "q3"}); }, {"q3"});
}

TEST_F(SessionErrors, TruncateBeyondLength) {
  Session s(model_, {.n_ctx = 64, .n_threads = 1});
  s.eval(std::vector<std::int32_t>{1, 2, 3});
  expect_error([&] { s.truncate(4); }, {"cannot keep 4 tokens"});
}

}  // namespace
}  // namespace wisp
