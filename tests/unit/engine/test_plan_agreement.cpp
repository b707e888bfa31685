// `wisp plan`'s users-that-fit against the scheduler: at the same KV budget (the memory a pool of
// N blocks takes, on top of the weights), the number of requests of S tokens the scheduler holds
// at once equals plan's capacity.users, for two models and two KV types. Each request has a
// prompt of S - 1 tokens and generates 2 (its first generated token is fed back, so it holds S
// tokens); S is chosen so that S - 1 and S need the same number of blocks, and every admitted
// prompt fits in one step's budget, so all that fit run together.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "engine/scheduler.h"
#include "formats/gguf_file.h"
#include "tests/support/run_command.h"
#include "wisp/engine.h"

namespace wisp {
namespace {

class PlanAgreement : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(PlanAgreement, SchedulerHoldsPlansUsersThatFit) {
  const std::string path = std::string(WISP_MODELS_DIR) + "/" + std::get<0>(GetParam());
  const std::string kv = std::get<1>(GetParam());
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "model not found: " << path;
  auto model = Model::load(path);
  const Tokenizer tok = Tokenizer::from_gguf(GgufFile::open(path));
  constexpr std::size_t kS = 31, kBlocks = 24;  // 2 blocks of 16 per request: 12 fit
  auto engine = Engine::create(model, {.n_threads = 2, .kv_tokens = kBlocks * 16, .kv_type = kv});
  const std::uint64_t budget = model->info().weight_bytes + engine->kv_bytes();
  const auto r = test::run_wisp("plan -m " + path + " --kv-type " + kv + " --ctx " + std::to_string(kS) + " --mem " +
                                std::to_string(budget) + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto plan = nlohmann::json::parse(r.out);
  const auto users = plan["capacity"]["users"].get<std::size_t>();
  ASSERT_EQ(plan["capacity"]["kv_room_bytes"].get<std::uint64_t>(), engine->kv_bytes());

  Scheduler sched(engine, tok, {.step_tokens = 512, .max_running = 64, .prefix_cache = false});
  for (int i = 0; i < 20; ++i) {
    RequestParams p;
    for (std::size_t t = 0; t < kS - 1; ++t) p.prompt.push_back(static_cast<TokenId>(100 + (i * 37 + t * 11) % 1000));
    p.max_tokens = 2;
    p.ignore_eos = true;
    p.sampling.temperature = 0;
    sched.submit(std::move(p), nullptr);
  }
  sched.run_until_idle();
  EXPECT_EQ(sched.stats().max_running_seen, users);
  EXPECT_EQ(sched.stats().preemptions, 0u);
  EXPECT_EQ(sched.stats().finished, 20u);
}

INSTANTIATE_TEST_SUITE_P(Models, PlanAgreement,
                         ::testing::Combine(::testing::Values("SmolLM2-135M-Instruct.Q4_1.gguf",
                                                              "gemma-3-270m-q4_k_m.gguf"),
                                            ::testing::Values("f16", "q8_0")),
                         [](const auto& p) {
                           std::string n = std::string(std::get<0>(p.param)).substr(0, 6) + "_" + std::get<1>(p.param);
                           std::replace_if(
                               n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); },
                               '_');
                           return n;
                         });

}  // namespace
}  // namespace wisp
