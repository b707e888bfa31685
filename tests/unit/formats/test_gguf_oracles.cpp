// Files written by wisp's GgufWriter, read back by the format's own Python package and by
// llama.cpp (through llama-cpp-python). These are the external references for the writer.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"
#include "tests/support/run_command.h"

namespace wisp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Runs a shell command, returns its stdout; fails the test on a non-zero exit.
std::string run(const std::string& cmd) {
  test::CommandResult r = test::run_command(cmd);
  EXPECT_EQ(r.status, 0) << "command failed: " << cmd << "\n" << r.all();
  return r.out;
}

fs::path scratch_dir(const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("wisp_" + tag + "_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

TEST(GgufOracle, WriterOutputReadByGgufPackage) {
  fs::path dir = scratch_dir("oracle");
  GgufWriter w(64);
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 2);
  w.set_f32("llama.rope.freq_base", 10000.5f);
  w.set_i64("x.i64", -5);
  w.set_bool("x.flag", false);
  w.set_strings("tokenizer.ggml.tokens", {"<s>", "a", "ü", "▁the"});
  w.set_f32s("tokenizer.ggml.scores", {0.0f, -1.5f, -2.25f, 3.0f});
  w.set_i32s("tokenizer.ggml.token_type", {3, 1, 1, 1});
  std::vector<std::uint8_t> f32(4 * 32 * 2), q41(20 * 3);
  for (std::size_t i = 0; i < f32.size(); ++i) f32[i] = static_cast<std::uint8_t>(i * 7);
  for (std::size_t i = 0; i < q41.size(); ++i) q41[i] = static_cast<std::uint8_t>(i * 13 + 1);
  w.add_tensor("a.weight", 0, {32, 2}, f32);
  w.add_tensor("b.weight", 3, {96}, q41);
  std::string path = (dir / "w.gguf").string();
  w.write(path);

  json got = json::parse(run("python3 " WISP_SOURCE_DIR "/scripts/gguf_oracle_dump.py " + path));
  EXPECT_EQ(got["version"], 3);
  EXPECT_EQ(got["alignment"], 64);
  std::map<std::string, json> kv;
  for (const json& e : got["kv"]) kv[e["key"].get<std::string>()] = e;
  EXPECT_EQ(kv["general.architecture"]["value"], "llama");
  EXPECT_EQ(kv["llama.block_count"]["types"][0], "UINT32");
  EXPECT_EQ(kv["llama.block_count"]["value"], 2);
  EXPECT_EQ(kv["llama.rope.freq_base"]["value"].get<double>(), static_cast<double>(10000.5f));
  EXPECT_EQ(kv["x.i64"]["types"][0], "INT64");
  EXPECT_EQ(kv["x.i64"]["value"], -5);
  EXPECT_EQ(kv["x.flag"]["value"], false);
  EXPECT_EQ(kv["tokenizer.ggml.tokens"]["value"], json({"<s>", "a", "ü", "▁the"}));
  EXPECT_EQ(kv["tokenizer.ggml.scores"]["value"], json({0.0, -1.5, -2.25, 3.0}));
  EXPECT_EQ(kv["tokenizer.ggml.token_type"]["types"][1], "INT32");
  ASSERT_EQ(got["tensors"].size(), 2u);
  EXPECT_EQ(got["tensors"][0]["name"], "a.weight");
  EXPECT_EQ(got["tensors"][0]["type"], "F32");
  EXPECT_EQ(got["tensors"][0]["ne"], json({32, 2}));
  EXPECT_EQ(got["tensors"][1]["type"], "Q4_1");
  EXPECT_EQ(got["tensors"][1]["n_bytes"], 60);
  // Our reader agrees on where the data lives.
  GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.tensor("b.weight").file_offset, got["tensors"][1]["offset"].get<std::uint64_t>());
  fs::remove_all(dir);
}

// Copy the real SmolLM2 model through GgufWriter (every key and tensor) and check that llama.cpp
// loads the copy and computes exactly the logits it computes from the original.
TEST(GgufOracle, CopiedModelRunsIdenticallyInLlamaCpp) {
  std::string src = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!fs::exists(src)) GTEST_FAIL() << src << " is missing: run scripts/fetch_models";
  fs::path dir = scratch_dir("copy");
  std::string dst = (dir / "copy.gguf").string();
  {
    GgufFile in = GgufFile::open(src);
    GgufWriter w(in.alignment());
    for (const GgufKeyValue& kv : in.metadata())
      if (kv.key != "general.alignment") w.set_value(kv.key, kv.value);
    for (const GgufTensor& t : in.tensors())
      w.add_tensor(t.name, t.type_id, std::vector<std::int64_t>(t.ne, t.ne + t.n_dims), {t.data, t.n_bytes});
    w.write(dst);
  }
  std::string script = "python3 " WISP_SOURCE_DIR "/scripts/llamacpp_logits.py ";
  json a = json::parse(run(script + src));
  json b = json::parse(run(script + dst));
  EXPECT_EQ(a["tokens"], b["tokens"]);
  EXPECT_EQ(a["n_vocab"], 49152);
  EXPECT_EQ(a["last_logits_fnv1a"], b["last_logits_fnv1a"]) << a.dump() << "\n" << b.dump();
  EXPECT_EQ(a["last_logits_head"], b["last_logits_head"]);
  bool any_nonzero = false;
  for (const json& x : a["last_logits_head"]) any_nonzero |= x.get<double>() != 0.0;
  EXPECT_TRUE(any_nonzero) << "llama.cpp logits look empty: " << a.dump();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace wisp
