// The GGUF reader against the `gguf` Python package's own parse of the two real models
// (tests/golden/gguf/*.json, written by scripts/gguf_oracle_dump.py).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "fnv1a.h"
#include "formats/gguf_file.h"

namespace wisp {
namespace {

using nlohmann::json;

std::string canonical_array_hash(const GgufValue& v) {
  test::Fnv1a h;
  if (v.array_type() == GgufValueType::kString) {
    for (std::string_view s : v.array_strings()) {
      std::uint64_t n = s.size();
      h.update(&n, 8);
      h.update(s.data(), s.size());
    }
  } else {
    auto b = v.array_bytes();
    h.update(b.data(), b.size());
  }
  return h.hex();
}

void expect_scalar_equal(const GgufValue& v, const json& want, const std::string& key) {
  switch (v.type()) {
    case GgufValueType::kString: EXPECT_EQ(v.as_string(), want.get<std::string>()) << key; break;
    case GgufValueType::kBool: EXPECT_EQ(v.as_bool(), want.get<bool>()) << key; break;
    case GgufValueType::kFloat32:
    case GgufValueType::kFloat64: EXPECT_EQ(v.as_f64(), want.get<double>()) << key; break;
    case GgufValueType::kInt8:
    case GgufValueType::kInt16:
    case GgufValueType::kInt32:
    case GgufValueType::kInt64: EXPECT_EQ(v.as_i64(), want.get<std::int64_t>()) << key; break;
    default: EXPECT_EQ(v.as_u64(), want.get<std::uint64_t>()) << key; break;
  }
}

class RealModel : public ::testing::TestWithParam<const char*> {};

TEST_P(RealModel, MatchesGgufPackage) {
  std::string model = GetParam();
  std::string path = std::string(WISP_MODELS_DIR) + "/" + model + ".gguf";
  if (!std::filesystem::exists(path)) GTEST_FAIL() << path << " is missing: run scripts/fetch_models";
  std::ifstream in(std::string(WISP_GOLDEN_DIR) + "/gguf/" + model + ".json");
  ASSERT_TRUE(in) << "golden file missing";
  json want = json::parse(in);

  GgufFile f = GgufFile::open(path);
  EXPECT_EQ(f.version(), want["version"].get<std::uint32_t>());
  EXPECT_EQ(f.alignment(), want["alignment"].get<std::uint32_t>());
  EXPECT_EQ(f.data_offset(), want["data_offset"].get<std::uint64_t>());

  ASSERT_EQ(f.metadata().size(), want["kv"].size());
  for (std::size_t i = 0; i < want["kv"].size(); ++i) {
    const json& w = want["kv"][i];
    const GgufKeyValue& kv = f.metadata()[i];
    std::string key = w["key"];
    ASSERT_EQ(kv.key, key) << "metadata order differs at #" << i;
    EXPECT_STREQ(gguf_value_type_name(kv.value.type()), w["types"][0].get<std::string>().c_str()) << key;
    if (kv.value.is_array()) {
      EXPECT_STREQ(gguf_value_type_name(kv.value.array_type()), w["types"][1].get<std::string>().c_str()) << key;
      ASSERT_EQ(kv.value.array_size(), w["len"].get<std::uint64_t>()) << key;
      if (w.contains("fnv1a")) {
        EXPECT_EQ(canonical_array_hash(kv.value), w["fnv1a"].get<std::string>()) << key;
      } else {
        for (std::uint64_t j = 0; j < kv.value.array_size(); ++j)
          expect_scalar_equal(kv.value.array_element(j), w["value"][j], key);
      }
    } else {
      expect_scalar_equal(kv.value, w["value"], key);
    }
  }

  ASSERT_EQ(f.tensors().size(), want["tensors"].size());
  for (std::size_t i = 0; i < want["tensors"].size(); ++i) {
    const json& w = want["tensors"][i];
    const GgufTensor& t = f.tensors()[i];
    std::string name = w["name"];
    ASSERT_EQ(t.name, name);
    EXPECT_EQ(t.type_id, w["type_id"].get<std::uint32_t>()) << name;
    EXPECT_EQ(std::string(t.type->name), w["type"].get<std::string>()) << name;
    std::vector<std::int64_t> ne(t.ne, t.ne + t.n_dims);
    EXPECT_EQ(ne, w["ne"].get<std::vector<std::int64_t>>()) << name;
    // The gguf package reports the absolute file offset of the data.
    EXPECT_EQ(t.file_offset, w["offset"].get<std::uint64_t>()) << name;
    EXPECT_EQ(t.n_bytes, w["n_bytes"].get<std::uint64_t>()) << name;
    EXPECT_EQ(f.find_tensor(name), &t);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, RealModel, ::testing::Values("SmolLM2-135M-Instruct.Q4_1", "gemma-3-270m-q4_k_m"),
                         [](const auto& info) {
                           std::string s = info.param;
                           for (char& c : s)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return s;
                         });

TEST(GgufRealModel, TensorsAreViewsIntoTheMapping) {
  std::string path = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) GTEST_FAIL() << path << " is missing: run scripts/fetch_models";
  GgufFile f = GgufFile::open(path);
  const GgufTensor& emb = f.tensor("token_embd.weight");
  // Reading the bytes through the view equals reading the file at the tensor's offset.
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(emb.file_offset));
  std::vector<char> buf(4096);
  in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
  EXPECT_EQ(std::memcmp(buf.data(), emb.data, buf.size()), 0);
  EXPECT_THROW(f.tensor("no.such.tensor"), Error);
  EXPECT_EQ(f.architecture(), "llama");
}

}  // namespace
}  // namespace wisp
