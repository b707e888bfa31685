// make_plan composes the arithmetic into the report `wisp plan` prints; these check the
// composition and the inputs it refuses.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "plan/plan.h"
#include "plan/report_json.h"
#include "plan/report_text.h"
#include "wisp/error.h"

namespace wisp::plan {
namespace {

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;

// Seed 000's Llama-2-13B, by hand.
PlanInputs llama13b() {
  PlanInputs in;
  in.model.source = "by hand";
  in.model.params = 13e9;
  in.model.kv = KvGeometry{40, 1, 5120};
  in.model.kv_width_from_d_model = true;
  return in;
}

std::string error_of(const PlanInputs& in) {
  try {
    make_plan(in);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Plan, C9ThroughTheWholePlan) {
  PlanInputs in = llama13b();
  in.weights.source = WeightChoice::Source::kBytes;
  in.weights.bytes = 26 * kGiB;
  in.budget = 80 * kGiB;
  in.overhead = 4 * kGiB;
  const PlanReport r = make_plan(in);
  EXPECT_EQ(r.kv_bytes_per_token, 819200u);
  EXPECT_EQ(r.kv_bytes_per_request, 3355443200u);
  EXPECT_EQ(r.request_paged.bytes, 3355443200u);  // 4096 = 256 whole blocks
  ASSERT_TRUE(r.capacity.has_value());
  EXPECT_EQ(r.capacity->users, 16u);
  EXPECT_EQ(r.capacity->leftover, 0u);
  // The ladder goes by the parameter count: 16 bits → 26e9 bytes (24.2 GiB): still 16 users;
  // 4 bits: 22.
  ASSERT_EQ(r.ladder.size(), 3u);
  EXPECT_EQ(r.ladder[0].fit->users, 16u);
  EXPECT_EQ(r.ladder[2].fit->users, 22u);
}

TEST(Plan, PagedVersusNaiveForALength) {
  PlanInputs in = llama13b();
  in.ctx = 2048;
  in.len = 100;
  const PlanReport r = make_plan(in);
  EXPECT_EQ(r.len_paged.blocks, 7u);
  EXPECT_EQ(r.len_paged.waste_tokens, 12u);
  EXPECT_EQ(r.len_naive.waste_tokens, 1948u);
  const std::string text = render_text(r);
  EXPECT_NE(text.find("naive wastes    162.3x the paged tail"), std::string::npos) << text;
  const nlohmann::json j = nlohmann::json::parse(render_json(r));
  EXPECT_EQ(j["paged_vs_naive"]["paged"]["blocks"], 7);
  EXPECT_EQ(j["paged_vs_naive"]["naive"]["waste_tokens"], 1948);
}

TEST(Plan, TextStatesUnits) {
  PlanInputs in = llama13b();
  in.budget = 40 * kGiB + 26000000000u;  // 40 GiB left after 13e9 × 2 bytes
  in.bandwidth = 3.35e12;
  in.compute = 100e12;
  in.users = 4;
  const PlanReport r = make_plan(in);
  EXPECT_EQ(r.capacity->users, 12u);
  EXPECT_EQ(r.capacity->leftover, kGiB * 5 / 2);
  const std::string text = render_text(r);
  EXPECT_NE(text.find("1024-based"), std::string::npos);
  EXPECT_NE(text.find("819,200 bytes (800 KiB)"), std::string::npos) << text;
  EXPECT_NE(text.find("3.125 GiB (3,355,443,200 bytes) for 4096 tokens"), std::string::npos) << text;
  EXPECT_NE(text.find("12 at 3.125 GiB each (37.5 GiB), 2.5 GiB left over"), std::string::npos) << text;
  EXPECT_NE(text.find("3.35 TB/s"), std::string::npos);
  EXPECT_NE(text.find("tok/s"), std::string::npos);
  EXPECT_NE(text.find("100 TFLOP/s"), std::string::npos);
  EXPECT_NE(text.find("precision ladder"), std::string::npos);
  in.units = UnitSystem::kDecimal;
  EXPECT_NE(render_text(make_plan(in)).find("3.355 GB"), std::string::npos);
}

TEST(Plan, DecodeAtBatchIncludesEachStreamsKv) {
  PlanInputs in;
  in.model.source = "by hand";
  in.model.params = 70e9;
  in.model.kv = KvGeometry{80, 8, 128};
  in.weights.bits = 4;
  in.ctx = 8000;
  in.users = 8;
  in.bandwidth = 1000e9;
  const PlanReport r = make_plan(in);
  EXPECT_EQ(std::lround(r.decode_weights_only->per_stream_tokens_per_second), 29);
  EXPECT_DOUBLE_EQ(r.decode_at_users->step_bytes, 35e9 + 8 * 2621440000.0);
  EXPECT_EQ(r.decode_at_users->batch, 8u);
}

TEST(Plan, RefusesImpossibleInputs) {
  PlanInputs in = llama13b();
  in.budget = 10 * kGiB;
  EXPECT_NE(error_of(in).find("is smaller than the weights"), std::string::npos) << error_of(in);

  in = llama13b();
  in.ctx = 0;
  EXPECT_EQ(error_of(in), "context length must be positive");

  in = llama13b();
  in.users = 0;
  EXPECT_EQ(error_of(in), "user count must be positive");

  in = llama13b();
  in.block_size = 0;
  EXPECT_EQ(error_of(in), "block size must be positive");

  in = llama13b();
  in.len = 5000;
  EXPECT_NE(error_of(in).find("exceeds the context length 4096"), std::string::npos);

  in = llama13b();
  in.model.params = 0;
  EXPECT_NE(error_of(in).find("need a parameter count"), std::string::npos) << error_of(in);

  in = llama13b();
  in.model.kv.layers = 0;
  EXPECT_EQ(error_of(in), "layer count must be positive");

  in = llama13b();
  in.weights.bits = -4;
  EXPECT_NE(error_of(in).find("bits per weight"), std::string::npos);
}

TEST(Plan, UsersBeyondCapacityGetANote) {
  PlanInputs in = llama13b();
  in.budget = 80 * kGiB;
  in.overhead = 4 * kGiB;
  in.users = 40;
  const PlanReport r = make_plan(in);
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("40 users do not fit: at most 16"), std::string::npos) << r.notes[0];
}

}  // namespace
}  // namespace wisp::plan
