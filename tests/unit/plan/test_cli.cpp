// The built `wisp plan` binary, end to end: a seed example through --json, and the messages and
// exit status (2) of bad input.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace {

struct WispRun {
  int status = -1;
  std::string out;  // stdout, or stdout and stderr when asked
};

WispRun run_wisp(const std::string& args, bool with_stderr) {
  const wisp::test::CommandResult r = wisp::test::run_wisp("plan " + args);
  return {r.status, with_stderr ? r.out + r.err : r.out};
}

// Seed 000 C9 by hand: 13B, 80 GiB card, 4 GiB overhead, the seed's 26 GiB of FP16 weights.
TEST(WispPlanCli, SeedC9AsJson) {
  const WispRun r = run_wisp(
      "--params 13e9 --layers 40 --d-model 5120 --ctx 4096 --mem 80GiB --overhead 4GiB "
      "--weight-bytes 26GiB --json",
      false);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kv"]["bytes_per_token"], 819200);
  EXPECT_EQ(j["kv"]["bytes_per_request"], 3355443200ull);
  EXPECT_EQ(j["capacity"]["kv_room_bytes"], 50ull << 30);
  EXPECT_EQ(j["capacity"]["users"], 16);
  EXPECT_EQ(j["capacity"]["leftover_bytes"], 0);
  EXPECT_EQ(j["ladder"][0]["users"], 16);  // 13e9 × 2 bytes
  EXPECT_EQ(j["ladder"][2]["users"], 22);  // 13e9 × 0.5 bytes: 6 more
}

// Seed 004's ladder and seed 001's GQA shape on a 160 GB node at 3.35 TB/s.
TEST(WispPlanCli, Seed004LadderAsJson) {
  const WispRun r = run_wisp(
      "--params 70B --layers 80 --kv-heads 8 --head-dim 128 --ctx 8000 --mem 160GB "
      "--bandwidth 3.35TB/s --json",
      false);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["kv"]["bytes_per_token"], 327680);
  EXPECT_EQ(j["kv"]["bytes_per_request"], 2621440000ull);
  const auto& ladder = j["ladder"];
  EXPECT_EQ(ladder[0]["weight_bytes"], 140000000000ull);
  EXPECT_EQ(ladder[1]["weight_bytes"], 70000000000ull);
  EXPECT_EQ(ladder[2]["weight_bytes"], 35000000000ull);
  EXPECT_EQ(ladder[0]["kv_room_bytes"], 20000000000ull);
  EXPECT_EQ(ladder[1]["kv_room_bytes"], 90000000000ull);
  EXPECT_EQ(ladder[2]["kv_room_bytes"], 125000000000ull);
  const double fp16 = ladder[0]["decode_one_stream_weights_only_tokens_per_second"];
  const double fp8 = ladder[1]["decode_one_stream_weights_only_tokens_per_second"];
  EXPECT_EQ(std::round(fp16 * 10) / 10, 23.9);
  EXPECT_EQ(std::round(fp8 * 10) / 10, 47.9);
}

TEST(WispPlanCli, WeightTypeUsesTheBlockTypesBitsPerWeight) {
  const WispRun r = run_wisp("--params 13e9 --layers 40 --d-model 5120 --weight-type Q4_K --json", false);
  ASSERT_EQ(r.status, 0) << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["model"]["weight_bytes"], 7312500000ull);  // 13e9 × 144 bytes / 256 values
}

TEST(WispPlanCli, TextReportRuns) {
  const WispRun r = run_wisp("--params 13e9 --layers 40 --d-model 5120 --ctx 2048 --len 100", true);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("7 blocks = 112 slots"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1948 tokens"), std::string::npos) << r.out;
}

TEST(WispPlanCli, HelpIsGeneratedFromTheFlagTable) {
  const WispRun r = run_wisp("--help", true);
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("usage: wisp plan [options]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--kv-type TYPE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("f16, f32, q8_0, q4"), std::string::npos) << r.out;
}

TEST(WispPlanCli, BadFlagNamesItAndExitsTwo) {
  const WispRun r = run_wisp("--params 13e9 --layers 40 --d-model 5120 --ctxx 4096", true);
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown flag '--ctxx' for 'wisp plan' (did you mean --ctx?)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wisp plan --help"), std::string::npos) << r.out;
}

TEST(WispPlanCli, BadValuesGetClearMessages) {
  struct Case {
    const char* args;
    const char* message;
  };
  const Case cases[] = {
      {"--layers 40 --d-model 5120 --params 13e9 --mem 80GiBs", "--mem: unknown unit 'GiBs' in '80GiBs'"},
      {"--layers 40 --d-model 5120 --params 13e9 --mem 80G", "ambiguous unit 'G'"},
      {"--layers 40 --d-model 5120 --params 13e9 --mem 0", "--mem must be positive"},
      {"--layers 40 --d-model 5120 --params 13e9 --mem -80GiB", "must not be negative"},
      {"--layers 40 --d-model 5120 --params 13e9 --ctx 0", "--ctx must be a positive integer"},
      {"--layers 40 --d-model 5120 --params 13e9 --users -3", "--users must be a positive integer"},
      {"--layers -40 --d-model 5120 --params 13e9", "--layers must be a positive integer"},
      {"--layers 40 --d-model 5120 --params -13e9", "must not be negative"},
      {"--layers 40 --d-model 5120 --params 13e9 --ctx 4k", "--ctx expects an integer, got '4k'"},
      {"--layers 40 --d-model 5120 --params 13e9 --mem 10GiB",
       "memory budget 10 GiB is smaller than the weights (24.21 GiB)"},
      {"--layers 40 --d-model 5120 --params 13e9 --kv-type q3", "unknown KV type 'q3'"},
      {"--layers 40 --d-model 5120 --params 13e9 --bandwidth 3TB", "is a size, not a bandwidth"},
      {"--layers 40 --d-model 5120 --params 13e9 --ctx", "--ctx needs a value (S)"},
      {"--layers 40 --params 13e9", "describe the attention"},
      {"--d-model 5120 --params 13e9", "--layers is required without -m FILE"},
      {"--layers 40 --d-model 5120", "weight bytes need --params"},
      {"--layers 40 --d-model 5120 --params 13e9 --weight-bits 16 --weight-bytes 1GiB", "give only one of"},
      {"--layers 40 --d-model 5120 --params 13e9 --ctx 100 --len 200", "--len 200 exceeds --ctx 100"},
      {"--layers 40 --d-model 5120 --params 13e9 --weight-type Q9", "unknown type 'Q9'"},
  };
  for (const Case& c : cases) {
    const WispRun r = run_wisp(c.args, true);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.message), std::string::npos) << c.args << "\n" << r.out;
  }
}

TEST(WispPlanCli, MissingModelFileIsARuntimeError) {
  const WispRun r = run_wisp("-m /nonexistent/model.gguf", true);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("/nonexistent/model.gguf"), std::string::npos) << r.out;
}

}  // namespace
