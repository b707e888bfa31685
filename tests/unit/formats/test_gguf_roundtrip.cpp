// GgufWriter -> GgufFile round trip over every metadata value type, nested arrays, tensors of
// several block types and a non-default alignment.
#include <gtest/gtest.h>

#include <filesystem>
#include <numeric>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"

namespace wisp {
namespace {

std::vector<std::uint8_t> pattern(std::size_t n, int seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>((i * 131 + seed * 17) & 0xff);
  return v;
}

TEST(GgufRoundTrip, EveryValueTypeAndTensors) {
  for (std::uint32_t alignment : {32u, 64u, 1u}) {
    GgufWriter w(alignment);
    w.set_u8("t.u8", 200);
    w.set_i8("t.i8", -100);
    w.set_u16("t.u16", 60000);
    w.set_i16("t.i16", -30000);
    w.set_u32("t.u32", 4000000000u);
    w.set_i32("t.i32", -2000000000);
    w.set_u64("t.u64", 18000000000000000000ull);
    w.set_i64("t.i64", -9000000000000000000ll);
    w.set_f32("t.f32", 0.1f);
    w.set_f64("t.f64", -2.5e-300);
    w.set_bool("t.bool", true);
    w.set_string("t.str", "héllo ✓ 世界");
    w.set_string("t.empty", "");
    w.set_strings("t.strs", {"a", "", "ß", "<|im_start|>"});
    w.set_i32s("t.i32s", {1, -2, 3});
    w.set_f32s("t.f32s", {1.5f, -0.25f});
    w.set_u32s("t.u32s", {});
    auto f32 = pattern(4 * 64 * 3, 1);
    auto q8 = pattern(34 * 2 * 5, 2);
    auto f16 = pattern(2 * 7, 3);
    w.add_tensor("a.f32", 0, {64, 3}, f32);
    w.add_tensor("b.q8_0", 8, {64, 5}, q8);
    w.add_tensor("c.f16", 1, {7}, f16);
    std::vector<std::uint8_t> bytes = w.to_bytes();

    GgufFile f = GgufFile::parse(bytes, "roundtrip.gguf");
    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), alignment);
    EXPECT_EQ(f.get("t.u8").as_u64(), 200u);
    EXPECT_EQ(f.get("t.i8").as_i64(), -100);
    EXPECT_EQ(f.get("t.u16").as_u64(), 60000u);
    EXPECT_EQ(f.get("t.i16").as_i64(), -30000);
    EXPECT_EQ(f.get("t.u32").as_u64(), 4000000000u);
    EXPECT_EQ(f.get("t.i32").as_i64(), -2000000000);
    EXPECT_EQ(f.get("t.u64").as_u64(), 18000000000000000000ull);
    EXPECT_EQ(f.get("t.i64").as_i64(), -9000000000000000000ll);
    EXPECT_EQ(f.get("t.f32").as_f64(), static_cast<double>(0.1f));
    EXPECT_EQ(f.get("t.f64").as_f64(), -2.5e-300);
    EXPECT_TRUE(f.get("t.bool").as_bool());
    EXPECT_EQ(f.get_string("t.str"), "héllo ✓ 世界");
    EXPECT_EQ(f.get_string("t.empty"), "");
    EXPECT_EQ(f.get("t.strs").array_strings(), (std::vector<std::string_view>{"a", "", "ß", "<|im_start|>"}));
    EXPECT_EQ(f.get("t.i32s").array_as<std::int32_t>(), (std::vector<std::int32_t>{1, -2, 3}));
    EXPECT_EQ(f.get("t.f32s").array_as<float>(), (std::vector<float>{1.5f, -0.25f}));
    EXPECT_EQ(f.get("t.u32s").array_size(), 0u);
    EXPECT_THROW(f.get("t.i8").as_u64(), Error);  // negative read as unsigned
    EXPECT_THROW(f.get_u64("t.str"), Error);
    EXPECT_THROW(f.get("missing.key"), Error);

    ASSERT_EQ(f.tensors().size(), 3u);
    const GgufTensor& a = f.tensor("a.f32");
    EXPECT_EQ(a.n_dims, 2);
    EXPECT_EQ(a.ne[0], 64);
    EXPECT_EQ(a.ne[1], 3);
    EXPECT_EQ(a.n_bytes, f32.size());
    EXPECT_EQ(std::memcmp(a.data, f32.data(), f32.size()), 0);
    const GgufTensor& b = f.tensor("b.q8_0");
    EXPECT_EQ(b.n_bytes, q8.size());
    EXPECT_EQ(b.row_bytes(), 68u);
    EXPECT_EQ(std::memcmp(b.data, q8.data(), q8.size()), 0);
    const GgufTensor& c = f.tensor("c.f16");
    EXPECT_EQ(std::memcmp(c.data, f16.data(), f16.size()), 0);
    for (const GgufTensor& t : f.tensors()) EXPECT_EQ(t.file_offset % alignment, 0u) << t.name;
  }
}

TEST(GgufRoundTrip, CopyingMetadataValuesPreservesThem) {
  GgufWriter w;
  w.set_strings("s", {"x", "yy"});
  w.set_f32s("f", {0.5f});
  w.set_i32("i", -7);
  auto bytes = w.to_bytes();
  GgufFile f = GgufFile::parse(bytes, "src.gguf");
  GgufWriter w2;
  for (const GgufKeyValue& kv : f.metadata()) w2.set_value(kv.key, kv.value);
  auto bytes2 = w2.to_bytes();
  EXPECT_EQ(bytes, bytes2);
}

TEST(GgufWriter, RejectsBadTensorsAndKeys) {
  GgufWriter w;
  std::vector<std::uint8_t> d(34);
  EXPECT_THROW(w.add_tensor("x", 999, {32}, d), Error);  // unknown type
  EXPECT_THROW(w.add_tensor("x", 8, {31}, d), Error);    // not a multiple of the block
  EXPECT_THROW(w.add_tensor("x", 8, {0}, d), Error);     // empty dimension
  EXPECT_THROW(w.add_tensor("x", 8, {}, d), Error);      // no dimensions
  w.add_tensor("x", 8, {32}, d);
  EXPECT_THROW(w.add_tensor("x", 8, {32}, d), Error);  // duplicate name
  w.set_u32("k", 1);
  EXPECT_THROW(w.set_u32("k", 2), Error);  // duplicate key
  GgufWriter short_data;
  std::vector<std::uint8_t> tiny(10);
  short_data.add_tensor("y", 8, {32}, tiny);
  EXPECT_THROW(short_data.to_bytes(), Error);  // data size does not match shape
}

TEST(GgufWriter, WritesAtomicallyAndReportsUnwritablePaths) {
  auto dir = std::filesystem::temp_directory_path() / ("wisp_writer_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  std::vector<std::uint8_t> d(4 * 8, 0);
  w.add_tensor("t", 0, {8}, d);
  std::string out = (dir / "out.gguf").string();
  w.write(out);
  GgufFile f = GgufFile::open(out);
  EXPECT_EQ(f.architecture(), "llama");
  // Only the final file remains: no temporary left behind.
  int n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
  EXPECT_EQ(n, 1);
  try {
    w.write((dir / "no/such/dir/out.gguf").string());
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/dir/out.gguf"), std::string::npos) << e.what();
  }
  // A fill callback that fails mid-write leaves no partial file.
  GgufWriter bad;
  bad.add_tensor("t", 0, {8}, [](std::span<std::uint8_t>) { throw Error("source tensor unreadable"); });
  EXPECT_THROW(bad.write((dir / "bad.gguf").string()), Error);
  EXPECT_FALSE(std::filesystem::exists(dir / "bad.gguf"));
  n = 0;
  for (auto& e : std::filesystem::directory_iterator(dir)) n += e.is_regular_file();
  EXPECT_EQ(n, 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace wisp
