// `wisp info` against the `gguf` Python package's view of the same files
// (tests/golden/gguf/*.json from scripts/gguf_oracle_dump.py): the figures it prints are
// recomputed here from the oracle's tensor table and metadata.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"

namespace {

using nlohmann::json;

struct Result {
  int rc;
  std::string out;  // stdout and stderr
};

Result run(const std::string& args) {
  wisp::test::CommandResult r = wisp::test::run_wisp(args);
  return {r.status, r.out + r.err};
}

json oracle(const std::string& model) {
  std::ifstream in(std::string(WISP_GOLDEN_DIR) + "/gguf/" + model + ".json");
  return json::parse(in);
}

const json* oracle_value(const json& o, const std::string& key) {
  for (const json& kv : o["kv"])
    if (kv["key"] == key) return &kv["value"];
  return nullptr;
}

class InfoOnModel : public ::testing::TestWithParam<const char*> {};

TEST_P(InfoOnModel, FiguresMatchTheGgufPackage) {
  std::string model = GetParam();
  std::string path = std::string(WISP_MODELS_DIR) + "/" + model + ".gguf";
  if (!std::filesystem::exists(path)) GTEST_FAIL() << path << " is missing: run scripts/fetch_models";
  Result r = run("info --json " + path);
  ASSERT_EQ(r.rc, 0) << r.out;
  json got = json::parse(r.out);
  json o = oracle(model);

  std::string arch = *oracle_value(o, "general.architecture");
  EXPECT_EQ(got["architecture"], arch);
  EXPECT_EQ(got["tensor_count"], o["tensors"].size());
  EXPECT_EQ(got["gguf_version"], o["version"]);
  EXPECT_EQ(got["file_bytes"], std::filesystem::file_size(path));

  // Per-type aggregates from the oracle's tensor table.
  std::map<std::string, std::array<std::uint64_t, 3>> by_type;  // tensors, params, bytes
  std::uint64_t params = 0, bytes = 0;
  for (const json& t : o["tensors"]) {
    std::uint64_t n = 1;
    for (const json& d : t["ne"]) n *= d.get<std::uint64_t>();
    auto& row = by_type[t["type"]];
    row[0] += 1;
    row[1] += n;
    row[2] += t["n_bytes"].get<std::uint64_t>();
    params += n;
    bytes += t["n_bytes"].get<std::uint64_t>();
  }
  EXPECT_EQ(got["parameters"], params);
  EXPECT_EQ(got["tensor_bytes"], bytes);
  EXPECT_DOUBLE_EQ(got["tensor_mib"].get<double>(), bytes / 1048576.0);
  ASSERT_EQ(got["types"].size(), by_type.size());
  for (const json& row : got["types"]) {
    auto it = by_type.find(row["type"]);
    ASSERT_NE(it, by_type.end()) << row.dump();
    EXPECT_EQ(row["tensors"], it->second[0]) << row["type"];
    EXPECT_EQ(row["parameters"], it->second[1]) << row["type"];
    EXPECT_EQ(row["bytes"], it->second[2]) << row["type"];
    EXPECT_DOUBLE_EQ(row["bits_per_weight"].get<double>(), 8.0 * it->second[2] / it->second[1]);
  }

  // Hyper-parameters: every "<arch>." key with the oracle's value.
  for (const json& kv : o["kv"]) {
    std::string key = kv["key"];
    if (key.rfind(arch + ".", 0) != 0) continue;
    std::string short_key = key.substr(arch.size() + 1);
    ASSERT_TRUE(got["hyperparameters"].contains(short_key)) << key;
    if (kv["value"].is_number_float())
      EXPECT_DOUBLE_EQ(got["hyperparameters"][short_key].get<double>(), kv["value"].get<double>()) << key;
    else
      EXPECT_EQ(got["hyperparameters"][short_key], kv["value"]) << key;
  }

  // Tokenizer and chat template.
  const json* tokens = nullptr;
  for (const json& kv : o["kv"])
    if (kv["key"] == "tokenizer.ggml.tokens") tokens = &kv;
  ASSERT_NE(tokens, nullptr);
  EXPECT_EQ(got["tokenizer"]["vocab_size"], (*tokens)["len"]);
  EXPECT_EQ(got["tokenizer"]["model"], *oracle_value(o, "tokenizer.ggml.model"));
  EXPECT_EQ(got["chat_template"], oracle_value(o, "tokenizer.chat_template") != nullptr);

  // --tensors lists every tensor with the oracle's type and shape.
  Result rt = run("info --json --tensors " + path);
  ASSERT_EQ(rt.rc, 0);
  json gt = json::parse(rt.out);
  ASSERT_EQ(gt["tensors"].size(), o["tensors"].size());
  for (std::size_t i = 0; i < o["tensors"].size(); ++i) {
    EXPECT_EQ(gt["tensors"][i]["name"], o["tensors"][i]["name"]);
    EXPECT_EQ(gt["tensors"][i]["type"], o["tensors"][i]["type"]);
    EXPECT_EQ(gt["tensors"][i]["shape"], o["tensors"][i]["ne"]);
  }

  // The text report states its units.
  Result text = run("info " + path);
  ASSERT_EQ(text.rc, 0);
  EXPECT_NE(text.out.find("MiB"), std::string::npos);
  EXPECT_NE(text.out.find("bits/weight"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Models, InfoOnModel, ::testing::Values("SmolLM2-135M-Instruct.Q4_1", "gemma-3-270m-q4_k_m"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

TEST(Info, BadInputGetsClearErrors) {
  Result none = run("info");
  EXPECT_EQ(none.rc, 2);
  EXPECT_NE(none.out.find("no model file given"), std::string::npos) << none.out;
  Result missing = run("info /no/such/model.gguf");
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.out.find("/no/such/model.gguf"), std::string::npos) << missing.out;
  Result flag = run("info --frobnicate x.gguf");
  EXPECT_EQ(flag.rc, 2);
  EXPECT_NE(flag.out.find("--frobnicate"), std::string::npos) << flag.out;
  Result help = run("info --help");
  EXPECT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("--tensors"), std::string::npos);
  // A file that is not GGUF: the message names the file and the field.
  std::string junk = std::filesystem::temp_directory_path() / ("wisp_junk_" + std::to_string(::getpid()) + ".gguf");
  { std::ofstream(junk) << "this is not a model file at all"; }
  Result bad = run("info " + junk);
  EXPECT_EQ(bad.rc, 1);
  EXPECT_NE(bad.out.find(junk), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("magic"), std::string::npos) << bad.out;
  std::filesystem::remove(junk);
  Result top = run("frobnicate");
  EXPECT_EQ(top.rc, 2);
  EXPECT_NE(top.out.find("unknown command"), std::string::npos);
}

}  // namespace
