// `wisp plan`'s predictions against what the runtime's KV pool really holds, on the real models:
// for each KV type and sequence length S, the paged bytes `wisp plan -m FILE --kv-type T --ctx S
// --json` reports for one request equal KvPool::bytes_held() of a sequence of S tokens in a pool
// laid out as Session lays it out, and a real Session that evaluated S tokens holds that much.
// Gemma 3's sliding-window layers are cached at full length by the pool and priced so by the plan.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kv/kv_pool.h"
#include "model/kv_layout_for.h"
#include "tests/support/run_command.h"
#include "model/model_state.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace wisp {
namespace {

using test::run_wisp;

std::uint64_t planned_bytes(const std::string& path, const std::string& type, std::size_t s) {
  const auto r = run_wisp("plan -m " + path + " --kv-type " + type + " --ctx " + std::to_string(s) + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kv"]["type"], type);
  return j["kv"]["paged_request"]["allocated_bytes"].get<std::uint64_t>();
}

class PlanAgreement : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    path_ = std::string(WISP_MODELS_DIR) + "/" + GetParam();
    if (!std::filesystem::exists(path_)) GTEST_SKIP() << "model not found: " << path_;
    model_ = Model::load(path_);
  }
  std::string path_;
  std::shared_ptr<const Model> model_;
};

TEST_P(PlanAgreement, PlannedBytesEqualWhatThePoolHolds) {
  for (const char* type : {"f16", "q8_0", "q4"}) {
    const KvLayout layout = model::kv_layout_for(*model_, 16, kv_type_from_name(type));
    KvPool pool(layout, 64 + 1);
    for (std::size_t s : {1u, 15u, 16u, 17u, 100u, 1000u}) {
      const SeqId seq = pool.create_sequence();
      pool.append(seq, s);
      EXPECT_EQ(pool.bytes_held(seq), planned_bytes(path_, type, s)) << type << ", " << s << " tokens";
      pool.free_sequence(seq);
    }
  }
}

TEST_P(PlanAgreement, ASessionThatEvaluatedSTokensHoldsThePlannedBytes) {
  const std::vector<std::int32_t> tokens(17, 1);
  for (const char* type : {"f16", "q8_0", "q4"}) {
    Session s(model_, {.n_ctx = 64, .n_threads = 1, .kv_type = type});
    s.eval(std::span(tokens).first(15));
    EXPECT_EQ(s.kv_bytes_held(), planned_bytes(path_, type, 15)) << type;
    s.eval(std::span(tokens).subspan(15));
    EXPECT_EQ(s.kv_bytes_held(), planned_bytes(path_, type, 17)) << type;
  }
}

// ModelInfo::kv_bytes_per_token is the default cache's (f16): a session with default options that
// evaluated one whole block of 16 tokens holds 16 times it, and the plan prices an f16 token alike.
TEST_P(PlanAgreement, ModelInfoKvBytesPerTokenIsTheDefaultCachesPerToken) {
  const std::vector<std::int32_t> tokens(16, 1);
  Session s(model_, {.n_ctx = 64, .n_threads = 1});
  s.eval(tokens);
  const std::uint64_t per_token = model_->info().kv_bytes_per_token;
  EXPECT_EQ(s.kv_bytes_held(), 16 * per_token);
  const auto r = run_wisp("plan -m " + path_ + " --kv-type f16 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["kv"]["bytes_per_token"].get<std::uint64_t>(), per_token);
}

TEST_P(PlanAgreement, SlidingWindowLayersAreCachedAtFullLength) {
  // Every layer, windowed or not, gets a plane in every block: the planner's per-token formula
  // (all layers alike) is the pool's.
  const auto& hp = detail::model_state(*model_).hp;
  const KvLayout layout = model::kv_layout_for(*model_, 16, KvType::kF16);
  EXPECT_EQ(layout.n_layers, static_cast<std::uint32_t>(hp.n_layer));
  EXPECT_EQ(layout.bytes_per_token(), 2u * hp.n_layer * hp.n_head_kv * hp.head_dim * 2);
  // And the plan says so for a windowed model.
  if (hp.n_swa > 0) {
    const auto r = run_wisp("plan -m " + path_ + " --json");
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["model"]["sliding_window"].get<std::int64_t>(), hp.n_swa);
    EXPECT_EQ(j["model"]["sliding_window_layers_cached"], "full length");
  }
}

INSTANTIATE_TEST_SUITE_P(RealModels, PlanAgreement,
                         ::testing::Values("SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"),
                         [](const auto& info) {
                           return std::string(info.param).substr(0, 6) == "SmolLM" ? "smollm2" : "gemma3";
                         });

}  // namespace
}  // namespace wisp
