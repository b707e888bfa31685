// HfCheckpoint: the single-file and sharded fixtures (written by the `safetensors` package, see
// scripts/gen_golden_safetensors.py) match expected.json, and inconsistent folders are errors that
// name the file and tensor at fault.

#include <cstdint>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fnv1a.h"
#include "formats/hf_checkpoint.h"
#include "safetensors_test_util.h"

namespace wisp {
namespace {

namespace fs = std::filesystem;
using st_test::error_of;
using st_test::expect_mentions;
using st_test::safetensors_image;
using st_test::TempDir;

const fs::path kGolden = fs::path(WISP_GOLDEN_DIR) / "safetensors";

nlohmann::json expected_for(const std::string& which) {
  return nlohmann::json::parse(std::ifstream(kGolden / "expected.json"))["checkpoints"][which];
}

void check_against_expected(const std::string& which) {
  SCOPED_TRACE(which);
  const nlohmann::json want = expected_for(which);
  HfCheckpoint ckpt = HfCheckpoint::open(kGolden / which);

  EXPECT_EQ(ckpt.architecture(), want["architecture"].get<std::string>());
  EXPECT_EQ(ckpt.model_type(), want["model_type"].get<std::string>());
  EXPECT_EQ(ckpt.config().at("architectures").size(), 1u);
  EXPECT_EQ(ckpt.is_sharded(), want["sharded"].get<bool>());
  EXPECT_EQ(ckpt.tokenizer_json().has_value(), want["tokenizer_json"].get<bool>());
  EXPECT_EQ(ckpt.tokenizer_config_json().has_value(), want["tokenizer_config_json"].get<bool>());
  if (ckpt.tokenizer_json()) {
    EXPECT_EQ(*ckpt.tokenizer_json(), kGolden / which / "tokenizer.json");
  }

  // Every shard once, in file-name order, with its metadata.
  ASSERT_EQ(ckpt.shards().size(), want["files"].size());
  std::size_t s = 0;
  for (const auto& [file, info] : want["files"].items()) {  // nlohmann objects iterate sorted by key
    const SafetensorsFile& shard = ckpt.shards()[s++];
    EXPECT_EQ(fs::path(shard.path()).filename(), file);
    EXPECT_EQ(shard.tensors().size(), info["n_tensors"].get<std::size_t>());
    std::map<std::string, std::string> meta(shard.metadata().begin(), shard.metadata().end());
    EXPECT_EQ(meta, (info["metadata"].get<std::map<std::string, std::string>>()));
  }

  ASSERT_EQ(ckpt.n_tensors(), want["tensors"].size());
  for (const auto& t : want["tensors"]) {
    const std::string name = t["name"];
    SCOPED_TRACE(name);
    const SafetensorsTensor& got = ckpt.tensor(name);
    EXPECT_EQ(got.dtype_name(), t["dtype"].get<std::string>());
    EXPECT_EQ(got.shape, t["shape"].get<std::vector<std::int64_t>>());
    EXPECT_EQ(got.n_bytes(), t["n_bytes"].get<std::uint64_t>());
    EXPECT_EQ(test::fnv1a_hex(got.data, got.n_bytes()), t["fnv1a64"].get<std::string>());
    EXPECT_EQ(fs::path(ckpt.shard_of(name).path()).filename(), t["file"].get<std::string>());
  }

  // Iteration: every tensor once, shard by shard, ascending offsets within a shard.
  std::set<std::string> seen;
  for (std::size_t i = 0; i < ckpt.tensors().size(); ++i) {
    const auto& ref = ckpt.tensors()[i];
    EXPECT_TRUE(seen.insert(ref.tensor->name).second);
    EXPECT_EQ(ckpt.find(ref.tensor->name), &ref);
    if (i > 0) {
      const auto& prev = ckpt.tensors()[i - 1];
      EXPECT_LE(prev.shard, ref.shard);
      if (prev.shard == ref.shard) {
        EXPECT_LE(prev.tensor->data_end, ref.tensor->data_begin);
      }
    }
  }
}

TEST(HfCheckpoint, SingleFileFixture) { check_against_expected("single"); }
TEST(HfCheckpoint, ShardedFixture) { check_against_expected("sharded"); }

TEST(HfCheckpoint, MissingTensorLookup) {
  HfCheckpoint ckpt = HfCheckpoint::open(kGolden / "sharded");
  EXPECT_EQ(ckpt.find_tensor("nope"), nullptr);
  expect_mentions(error_of([&] { ckpt.tensor("nope"); }), {"sharded", "'nope'"});
  expect_mentions(error_of([&] { ckpt.shard_of("nope"); }), {"'nope'"});
}

TEST(HfCheckpoint, MoveKeepsTensorRefsValid) {
  HfCheckpoint a = HfCheckpoint::open(kGolden / "sharded");
  const SafetensorsTensor* t = a.find_tensor("model.norm.weight");
  HfCheckpoint b = std::move(a);
  EXPECT_EQ(b.find_tensor("model.norm.weight"), t);
  EXPECT_EQ(b.tensor("model.norm.weight").n_elements, 6);
}

// ---- broken folders ------------------------------------------------------------------------

// A one-tensor safetensors image holding tensor `name` (F32, shape [1]).
std::vector<std::uint8_t> one_tensor(const std::string& name) {
  return safetensors_image(R"({")" + name + R"(":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4);
}

const char* kConfig = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama"})";

TEST(HfCheckpointMalformed, NotAFolder) {
  expect_mentions(error_of([] { HfCheckpoint::open(kGolden / "single" / "config.json"); }),
                  {"config.json", "not a folder"});
  expect_mentions(error_of([] { HfCheckpoint::open("/nonexistent/ckpt"); }), {"/nonexistent/ckpt"});
}

TEST(HfCheckpointMalformed, MissingConfig) {
  TempDir d;
  d.write("model.safetensors", one_tensor("w"));
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }), {"config.json", "missing"});
}

TEST(HfCheckpointMalformed, BadConfig) {
  TempDir d;
  d.write("model.safetensors", one_tensor("w"));
  d.write("config.json", "{\"a\": 1,}");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }), {"config.json", "invalid JSON", "byte offset"});
  d.write("config.json", "[]");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }), {"config.json", "expected an object"});
}

TEST(HfCheckpointMalformed, ConfigFieldsMissingOrMistyped) {
  TempDir d;
  d.write("model.safetensors", one_tensor("w"));
  d.write("config.json", R"({"architectures": [], "model_type": 3})");
  HfCheckpoint ckpt = HfCheckpoint::open(d.path());  // the fields are checked when asked for
  expect_mentions(error_of([&] { ckpt.architecture(); }), {"config.json", "'architectures'"});
  expect_mentions(error_of([&] { ckpt.model_type(); }), {"config.json", "'model_type'", "JSON number"});
}

TEST(HfCheckpointMalformed, NoWeights) {
  TempDir d;
  d.write("config.json", kConfig);
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }),
                  {"no weights", "model.safetensors", "model.safetensors.index.json"});
}

TEST(HfCheckpointMalformed, BadSingleFileNamesIt) {
  TempDir d;
  d.write("config.json", kConfig);
  d.write("model.safetensors", safetensors_image("{}", 0, 999));
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }), {"model.safetensors", "header length 999"});
}

TEST(HfCheckpointMalformed, IndexNamesTensorAbsentFromItsShard) {
  TempDir d;
  d.write("config.json", kConfig);
  d.write("a.safetensors", one_tensor("w1"));
  d.write("model.safetensors.index.json", R"({"weight_map": {"w1": "a.safetensors", "w2": "a.safetensors"}})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }),
                  {"model.safetensors.index.json", "tensor 'w2'", "'a.safetensors'", "no tensor of that name"});
}

TEST(HfCheckpointMalformed, MissingShard) {
  TempDir d;
  d.write("config.json", kConfig);
  d.write("a.safetensors", one_tensor("w1"));
  d.write("model.safetensors.index.json", R"({"weight_map": {"w1": "a.safetensors", "w2": "b.safetensors"}})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }),
                  {"model.safetensors.index.json", "shard 'b.safetensors'", "tensor 'w2'", "missing"});
}

TEST(HfCheckpointMalformed, ShardOutsideTheFolder) {
  TempDir d;
  d.write("config.json", kConfig);
  d.write("model.safetensors.index.json", R"({"weight_map": {"w": "../a.safetensors"}})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }),
                  {"'w'", "'../a.safetensors'", "not a plain file name"});
}

TEST(HfCheckpointMalformed, TensorInTwoShards) {
  TempDir d;
  d.write("config.json", kConfig);
  // The index is self-consistent (w in a, v in b), but shard b carries a second copy of w.
  d.write("a.safetensors", one_tensor("w"));
  d.write("b.safetensors", safetensors_image(R"({"v":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                             R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                             8));
  d.write("model.safetensors.index.json", R"({"weight_map": {"w": "a.safetensors", "v": "b.safetensors"}})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }),
                  {"tensor 'w'", "two shards", "a.safetensors", "b.safetensors"});
}

TEST(HfCheckpoint, ShardTensorsBeyondTheIndexAreKept) {
  TempDir d;
  d.write("config.json", kConfig);
  d.write("b.safetensors", safetensors_image(R"({"v":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                                             R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                             8));
  d.write("model.safetensors.index.json", R"({"weight_map": {"v": "b.safetensors"}})");
  HfCheckpoint ckpt = HfCheckpoint::open(d.path());
  EXPECT_EQ(ckpt.n_tensors(), 2u);
  EXPECT_NE(ckpt.find_tensor("w"), nullptr);
}

TEST(HfCheckpointMalformed, BadIndex) {
  TempDir d;
  d.write("config.json", kConfig);
  d.write("model.safetensors.index.json", R"({"metadata": {}})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }),
                  {"model.safetensors.index.json", "missing field 'weight_map'"});
  d.write("model.safetensors.index.json", R"({"weight_map": []})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }), {"'weight_map'", "JSON array"});
  d.write("model.safetensors.index.json", R"({"weight_map": {}})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }), {"'weight_map' is empty"});
  d.write("model.safetensors.index.json", R"({"weight_map": {"w": 1}})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }), {"weight_map entry 'w'", "JSON number"});
  d.write("model.safetensors.index.json", R"({"weight_map": {"w": "a.safetensors", "w": "b.safetensors"}})");
  expect_mentions(error_of([&] { HfCheckpoint::open(d.path()); }), {"duplicate JSON key 'w'", "inside 'weight_map'"});
}

}  // namespace
}  // namespace wisp
