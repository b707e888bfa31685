// A GGUF file with a tensor of a type id wisp does not read: `wisp info` still describes the rest
// of the file and names the unknown id, while loading the model fails with an error that names
// the tensor and the id and lists the types wisp reads. The file is crafted here (GgufWriter,
// then the tensor's type id patched in the tensor table), so every expected value is the test's own input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "formats/gguf_writer.h"
#include "tests/support/run_command.h"

namespace {

namespace fs = std::filesystem;

// Writes a small "llama" file whose tensor `odd.weight` (F32 [64] as written) gets type id `id`.
fs::path crafted_file(std::uint32_t id) {
  wisp::GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", "crafted unknown type");
  w.set_u32("llama.block_count", 1);
  w.set_u32("llama.embedding_length", 32);
  std::vector<float> a(32, 1.0f), b(64, 2.0f);
  w.add_tensor("token_embd.weight", 0, {32}, {reinterpret_cast<const std::uint8_t*>(a.data()), a.size() * 4});
  w.add_tensor("odd.weight", 0, {64}, {reinterpret_cast<const std::uint8_t*>(b.data()), b.size() * 4});
  std::vector<std::uint8_t> bytes = w.to_bytes();
  // The tensor info: name (u64 length + bytes), n_dims u32, one u64 dim, then the type u32.
  const std::string name = "odd.weight";
  auto at = std::search(bytes.begin(), bytes.end(), name.begin(), name.end());
  EXPECT_NE(at, bytes.end());
  const std::size_t type_pos = static_cast<std::size_t>(at - bytes.begin()) + name.size() + 4 + 8;
  std::uint32_t old_type = 99;
  std::memcpy(&old_type, bytes.data() + type_pos, 4);
  EXPECT_EQ(old_type, 0u);  // F32: the patch hits the type field
  std::memcpy(bytes.data() + type_pos, &id, 4);
  const fs::path dir = fs::temp_directory_path() / ("wisp_unknown_type_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path path = dir / ("type" + std::to_string(id) + ".gguf");
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(InfoUnknownType, DescribesTheRestAndNamesTheId) {
  const fs::path path = crafted_file(41);  // GGML's Q1_0, which wisp does not read
  const wisp::test::CommandResult r = wisp::test::run_wisp("info --tensors " + path.string());
  ASSERT_EQ(r.status, 0) << r.all();
  EXPECT_NE(r.out.find("crafted unknown type"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("block_count"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("token_embd.weight"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tensors:        2"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("'odd.weight'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("type id 41 (GGML's Q1_0, which wisp does not implement)"), std::string::npos) << r.out;

  const wisp::test::CommandResult j = wisp::test::run_wisp("info --json " + path.string());
  ASSERT_EQ(j.status, 0) << j.all();
  const nlohmann::json got = nlohmann::json::parse(j.out);
  EXPECT_EQ(got["architecture"], "llama");
  EXPECT_EQ(got["tensor_count"], 2);
  EXPECT_EQ(got["tensor_bytes"], 32 * 4);  // the readable tensor only: the other's size is unknown
  ASSERT_EQ(got["unreadable_types"].size(), 1u);
  EXPECT_NE(got["unreadable_types"][0].get<std::string>().find("type id 41"), std::string::npos);

  // An id GGML does not define either.
  const fs::path odd = crafted_file(1234);
  const wisp::test::CommandResult o = wisp::test::run_wisp("info " + odd.string());
  ASSERT_EQ(o.status, 0) << o.all();
  EXPECT_NE(o.out.find("type id 1234 (not a GGML type)"), std::string::npos) << o.out;
  fs::remove_all(path.parent_path());
}

TEST(InfoUnknownType, LoadingFailsListingTheSupportedTypes) {
  const fs::path path = crafted_file(41);
  const wisp::test::CommandResult r = wisp::test::run_wisp("run -m " + path.string() + " -p hi -n 1");
  EXPECT_NE(r.status, 0) << r.all();
  const std::string all = r.all();
  EXPECT_NE(all.find("tensor 'odd.weight' type"), std::string::npos) << all;
  EXPECT_NE(all.find("type id 41 (GGML's Q1_0"), std::string::npos) << all;
  EXPECT_NE(all.find("wisp reads F32, F16"), std::string::npos) << all;
  EXPECT_NE(all.find("MXFP4"), std::string::npos) << all;
  fs::remove_all(path.parent_path());
}

}  // namespace
