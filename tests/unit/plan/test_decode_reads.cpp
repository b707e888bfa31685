// What a decode step reads of the weights, as `wisp plan` and `wisp bench` state it, against the
// counts scripts/gen_golden_decode_bytes.py made by hand with the gguf package from the tiny
// GGUFs' tensor tables (tests/golden/plan/decode_bytes.json): of a mixture of experts only the
// chosen experts' rows, of an untied embedding one row, everything else whole.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "plan/decode_reads.h"
#include "tests/support/run_command.h"
#include "wisp/error.h"

namespace wisp::plan {
namespace {

using nlohmann::json;

json golden() {
  std::ifstream in(std::string(WISP_GOLDEN_DIR) + "/plan/decode_bytes.json");
  EXPECT_TRUE(in.good()) << "tests/golden/plan/decode_bytes.json missing";
  return json::parse(in);
}

std::string model_path(const json& row) {
  return std::string(WISP_GOLDEN_DIR) + "/logits/" + row["model"].get<std::string>();
}

TEST(DecodeReads, GoldenCoversMixturesOfExpertsAndDenseModels) {
  const json g = golden();
  int moe = 0, untied = 0;
  for (const json& row : g["models"]) {
    moe += row["expert_count"].get<int>() > 0;
    untied += row["untied_output"].get<bool>();
  }
  EXPECT_GE(moe, 3);     // mixtral, qwen3moe, gpt-oss
  EXPECT_GE(untied, 2);  // the embedding read as one row
}

TEST(DecodeReads, PlanStatesTheBytesAStepReads) {
  const json g = golden();
  const int batch = g["batch"].get<int>();
  for (const json& row : g["models"]) {
    SCOPED_TRACE(row["model"].get<std::string>());
    const auto r = test::run_wisp("plan -m " + model_path(row) + " --ctx 64 --users " + std::to_string(batch) +
                                  " --bandwidth 100e9 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const json j = json::parse(r.out);
    const json& m = j["model"];
    EXPECT_EQ(m["weight_bytes"].get<std::uint64_t>(), row["file_bytes"].get<std::uint64_t>());
    const std::uint64_t one = row["decode_bytes"].get<std::uint64_t>();
    EXPECT_EQ(m["decode_weight_bytes"].get<std::uint64_t>(), one);
    EXPECT_EQ(m["decode_params"].get<std::uint64_t>(), row["decode_params"].get<std::uint64_t>());
    if (row["expert_count"].get<int>() > 0) {
      EXPECT_EQ(m["experts"]["count"], row["expert_count"]);
      EXPECT_EQ(m["experts"]["used"], row["expert_used_count"]);
    } else {
      EXPECT_FALSE(m.contains("experts"));
    }
    // The decode ceiling reads those bytes: one stream, and the batch of users (the union of
    // their experts, in expectation; rounding allowed).
    const json& w = j["decode"]["weights_only"];
    EXPECT_EQ(w["weight_bytes"].get<std::uint64_t>(), one);
    EXPECT_NEAR(w["per_stream_tokens_per_second"].get<double>(), 100e9 / static_cast<double>(one), 1e-6);
    const double at_users = j["decode"]["at_users"]["weight_bytes"].get<double>();
    EXPECT_NEAR(at_users, row["decode_bytes_batch4"].get<double>(), 1.0);
  }
}

TEST(DecodeReads, PlanTextNamesTheExpertsRead) {
  for (const json& row : golden()["models"]) {
    if (row["expert_count"].get<int>() == 0) continue;
    SCOPED_TRACE(row["model"].get<std::string>());
    const auto r = test::run_wisp("plan -m " + model_path(row) + " --ctx 64");
    ASSERT_EQ(r.status, 0) << r.err;
    const std::string want = std::to_string(row["expert_used_count"].get<int>()) + " of " +
                             std::to_string(row["expert_count"].get<int>()) + " experts' rows";
    EXPECT_NE(r.out.find("read per token"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find(want), std::string::npos) << r.out;
  }
}

// `wisp bench`'s effective GB/s for decode is tok/s x the bytes a step reads, not the file size.
TEST(DecodeReads, BenchBandwidthCountsTheBytesRead) {
  for (const json& row : golden()["models"]) {
    if (row["expert_count"].get<int>() == 0 && !row["untied_output"].get<bool>()) continue;
    SCOPED_TRACE(row["model"].get<std::string>());
    const auto r = test::run_wisp("bench -m " + model_path(row) + " -p 0 -n 4 -r 1 -t 1 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const json& e = json::parse(r.out)["results"][0];
    ASSERT_EQ(e["test"], "tg4");
    EXPECT_EQ(e["bytes"].get<std::uint64_t>(), row["file_bytes"].get<std::uint64_t>());
    const std::uint64_t read = row["decode_bytes"].get<std::uint64_t>();
    EXPECT_EQ(e["decode_bytes_per_token"].get<std::uint64_t>(), read);
    const double gb_s = e["tok_s"].get<double>() * static_cast<double>(read) / 1e9;
    EXPECT_NEAR(e["gb_s"].get<double>(), gb_s, gb_s * 1e-9);
  }
}

// The share of the experts a batch reads: k/n for one token, 1 - (1 - k/n)^B for B, never more
// than all of them.
TEST(DecodeReads, ExpertShareOfABatch) {
  DecodeReads r;
  r.dense_bytes = 1000;
  r.n_expert = 128;
  r.n_expert_used = 8;
  r.expert_bytes = 128 * 64;
  EXPECT_EQ(expert_share_read(r, 1), 8.0 / 128.0);
  EXPECT_EQ(decode_bytes_read(r, 1), 1000u + 8 * 64);
  EXPECT_NEAR(expert_share_read(r, 2), 1 - (120.0 / 128) * (120.0 / 128), 1e-15);
  EXPECT_LE(decode_bytes_read(r, 1000), 1000u + 128 * 64);
  EXPECT_THROW(expert_share_read(r, 0), Error);
  DecodeReads dense;
  dense.dense_bytes = 77;
  EXPECT_EQ(decode_bytes_read(dense, 16), 77u);
}

// Merged expert tensors whose outer dimension is not the expert count, or a file without the
// counts, are errors naming the file and the tensor or key.
TEST(DecodeReads, InconsistentExpertsAreNamedErrors) {
  auto file = [](bool with_count, std::int64_t outer, bool with_used) {
    GgufWriter w;
    w.set_string("general.architecture", "qwen3moe");
    if (with_count) w.set_u32("qwen3moe.expert_count", 4);
    if (with_used) w.set_u32("qwen3moe.expert_used_count", 2);
    w.add_tensor("blk.0.ffn_up_exps.weight", 0, {8, 8, outer},
                 std::vector<std::uint8_t>(static_cast<std::size_t>(8 * 8 * outer * 4), 0));
    return w.to_bytes();
  };
  auto error_of = [](const std::vector<std::uint8_t>& bytes) -> std::string {
    try {
      decode_reads_from_gguf(GgufFile::parse(bytes, "moe.gguf"));
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
  const std::vector<std::uint8_t> ok = file(true, 4, true);
  const DecodeReads r = decode_reads_from_gguf(GgufFile::parse(ok, "moe.gguf"));
  EXPECT_EQ(r.expert_bytes, 8u * 8 * 4 * 4);
  EXPECT_EQ(decode_bytes_read(r), 8u * 8 * 2 * 4);

  std::string e = error_of(file(false, 4, true));
  EXPECT_NE(e.find("moe.gguf"), std::string::npos) << e;
  EXPECT_NE(e.find("qwen3moe.expert_count"), std::string::npos) << e;
  e = error_of(file(true, 3, true));
  EXPECT_NE(e.find("blk.0.ffn_up_exps.weight"), std::string::npos) << e;
  e = error_of(file(true, 4, false));
  EXPECT_NE(e.find("qwen3moe.expert_used_count"), std::string::npos) << e;
}

}  // namespace
}  // namespace wisp::plan
