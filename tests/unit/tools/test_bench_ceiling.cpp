// `wisp bench --bandwidth` prints, next to each measured decode speed, the ceiling `wisp plan`'s
// arithmetic predicts for this file on this machine and the fraction reached. The ceiling is
// recomputed here from the seeds' formula with the model's shape as the gguf package reads it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace {

using nlohmann::json;

std::uint64_t oracle_u64(const json& o, const std::string& key) {
  for (const json& kv : o["kv"])
    if (kv["key"] == key) return kv["value"].get<std::uint64_t>();
  ADD_FAILURE() << key << " missing from the golden dump";
  return 0;
}

TEST(BenchCeiling, DecodeRowsCarryThePlannedCeilingAndTheFraction) {
  const std::string model = "SmolLM2-135M-Instruct.Q4_1";
  const std::string path = std::string(WISP_MODELS_DIR) + "/" + model + ".gguf";
  if (!std::filesystem::exists(path)) GTEST_FAIL() << path << " is missing: run scripts/fetch_models";
  const auto r = wisp::test::run_wisp("bench -m " + path + " -p 0 -n 8 -r 1 -t 1 --bandwidth --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = json::parse(r.out);
  const double bw = j["read_bandwidth_gb_s"].get<double>();
  ASSERT_GT(bw, 0.0);
  // The rate per CPU second of the readers is never below the wall-clock rate of the same passes
  // (each reader's CPU time fits inside the pass): the probe reports the former.
  const double wall = j["read_bandwidth_wall_gb_s"].get<double>();
  EXPECT_GT(wall, 0.0);
  EXPECT_GE(bw, wall * (1 - 1e-6));
  ASSERT_EQ(j["results"].size(), 1u);
  const json& row = j["results"][0];
  ASSERT_EQ(row["test"], "tg8");

  std::ifstream in(std::string(WISP_GOLDEN_DIR) + "/gguf/" + model + ".json");
  const json o = json::parse(in);
  const std::uint64_t layers = oracle_u64(o, "llama.block_count");
  const std::uint64_t kv_heads = oracle_u64(o, "llama.attention.head_count_kv");
  const std::uint64_t head_dim = oracle_u64(o, "llama.embedding_length") / oracle_u64(o, "llama.attention.head_count");
  // K and V, every layer and KV head, 2 bytes per f16 value; tg8 from an empty cache reads on
  // average (8 + 1) / 2 tokens of it per step.
  const std::uint64_t kv_per_step = 2 * layers * kv_heads * head_dim * 2 * 9 / 2;
  EXPECT_EQ(row["kv_bytes_per_step"].get<std::uint64_t>(), kv_per_step);
  std::uint64_t weight_bytes = 0;
  for (const json& t : o["tensors"]) weight_bytes += t["n_bytes"].get<std::uint64_t>();
  const double ceiling = bw * 1e9 / static_cast<double>(weight_bytes + kv_per_step);
  EXPECT_NEAR(row["ceiling_tok_s"].get<double>(), ceiling, ceiling * 1e-9);
  EXPECT_NEAR(row["fraction_of_ceiling"].get<double>(), row["tok_s"].get<double>() / ceiling, 1e-9);
  // A measured speed above the memory-bound ceiling would mean the arithmetic is wrong.
  EXPECT_LT(row["fraction_of_ceiling"].get<double>(), 1.0);
}

}  // namespace

namespace {

// `wisp plan --bandwidth measure` predicts from this machine's measured read bandwidth.
TEST(PlanMeasuredBandwidth, CeilingFollowsTheMeasuredRate) {
  const std::string path = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) GTEST_FAIL() << path << " is missing: run scripts/fetch_models";
  const auto r = wisp::test::run_wisp("plan -m " + path + " --ctx 1024 --bandwidth measure --json");
  ASSERT_EQ(r.status, 0) << r.err;
  const json d = json::parse(r.out)["decode"];
  const double bw = d["bandwidth_bytes_per_second"].get<double>();
  // Any real machine reads between 100 MB/s and 100 TB/s; outside that the measurement is broken.
  EXPECT_GT(bw, 1e8);
  EXPECT_LT(bw, 1e14);
  const json& w = d["weights_only"];
  EXPECT_NEAR(w["per_stream_tokens_per_second"].get<double>(), bw / w["weight_bytes"].get<double>(), 1e-6);
  const auto bad = wisp::test::run_wisp("plan -m " + path + " --bandwidth measured");
  EXPECT_EQ(bad.status, 2) << bad.err;
  EXPECT_NE(bad.err.find("--bandwidth"), std::string::npos) << bad.err;
}

}  // namespace
