// Every class of malformed GGUF gets a wisp::Error naming the file, the field and the byte offset,
// never a crash. Files are built byte by byte so each defect sits at a known place.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats/gguf_file.h"
#include "formats/gguf_writer.h"

namespace wisp {
namespace {

struct Bytes {
  std::vector<std::uint8_t> b;
  template <typename T>
  Bytes& put(T v) {
    std::uint8_t tmp[sizeof(T)];
    std::memcpy(tmp, &v, sizeof(T));
    b.insert(b.end(), tmp, tmp + sizeof(T));
    return *this;
  }
  Bytes& u32(std::uint32_t v) { return put(v); }
  Bytes& u64(std::uint64_t v) { return put(v); }
  Bytes& str(std::string_view s) {
    u64(s.size());
    b.insert(b.end(), s.begin(), s.end());
    return *this;
  }
  Bytes& pad_to(std::size_t align) {
    while (b.size() % align) b.push_back(0);
    return *this;
  }
  Bytes& zeros(std::size_t n) {
    b.insert(b.end(), n, 0);
    return *this;
  }
};

Bytes header(std::uint64_t n_tensors, std::uint64_t n_kv, std::uint32_t version = 3) {
  Bytes h;
  h.u32(kGgufMagic).u32(version).u64(n_tensors).u64(n_kv);
  return h;
}

// Parses `b` expecting a wisp::Error whose message contains each of `needles`.
void expect_error(const Bytes& b, std::initializer_list<std::string> needles) {
  try {
    GgufFile::parse(b.b, "bad.gguf");
    ADD_FAILURE() << "parse succeeded, expected an error mentioning " << *needles.begin();
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("bad.gguf"), std::string::npos) << msg;
    EXPECT_NE(msg.find("byte offset"), std::string::npos) << msg;
    for (const std::string& n : needles)
      EXPECT_NE(msg.find(n), std::string::npos) << "missing '" << n << "' in: " << msg;
  }
}

// One F32 tensor of 8 values named `name` with `n_dims` dims `ne`, type `type`, offset `off`.
Bytes& tensor_info(Bytes& b, std::string_view name, std::vector<std::uint64_t> ne, std::uint32_t type,
                   std::uint64_t off) {
  b.str(name).u32(static_cast<std::uint32_t>(ne.size()));
  for (auto d : ne) b.u64(d);
  return b.u32(type).u64(off);
}

TEST(GgufMalformed, BadMagic) {
  Bytes b;
  b.u32(0x46554747 ^ 0xff).u32(3).u64(0).u64(0);
  expect_error(b, {"magic", "byte offset 0", "not a GGUF file"});
  Bytes empty;
  expect_error(empty, {"magic", "truncated"});
}

TEST(GgufMalformed, UnsupportedVersion) {
  expect_error(header(0, 0, 1), {"version", "byte offset 4", "unsupported GGUF version 1"});
  expect_error(header(0, 0, 4), {"version", "unsupported GGUF version 4"});
  expect_error(header(0, 0, 0x03000000), {"big-endian"});
}

TEST(GgufMalformed, CountsPastTheEnd) {
  expect_error(header(0, 1ull << 60), {"metadata_kv_count", "byte offset 16", "exceeds"});
  expect_error(header(1ull << 60, 0), {"tensor_count", "byte offset 8", "exceeds"});
}

TEST(GgufMalformed, StringLengthPastTheEnd) {
  Bytes b = header(0, 1);
  b.u64(~0ull).zeros(16);  // key length
  expect_error(b, {"metadata key #0", "byte offset 24", "runs past the end"});
  Bytes v = header(0, 1);
  v.str("k").u32(8).u64(1000).zeros(3);  // string value longer than the file
  expect_error(v, {"metadata 'k' string value", "runs past the end"});
}

TEST(GgufMalformed, ArrayLengthPastTheEnd) {
  Bytes b = header(0, 1);
  b.str("arr").u32(9).u32(4).u64(1ull << 62);  // u32 array claiming 2^62 elements
  expect_error(b, {"metadata 'arr' array length", "byte offset 43", "runs past the end"});
}

TEST(GgufMalformed, UnknownValueType) {
  Bytes b = header(0, 1);
  b.str("k").u32(13).u32(0);
  expect_error(b, {"metadata 'k' type", "byte offset 33", "unknown value type id 13"});
  Bytes a = header(0, 1);
  a.str("k").u32(9).u32(77).u64(0);
  expect_error(a, {"array element type", "unknown value type id 77"});
}

TEST(GgufMalformed, BadBool) {
  Bytes b = header(0, 1);
  b.str("flag").u32(7).put<std::uint8_t>(2);
  expect_error(b, {"metadata 'flag' bool", "neither 0 nor 1"});
}

TEST(GgufMalformed, NonUtf8Key) {
  Bytes b = header(0, 1);
  b.str("bad\xff\xfekey").u32(4).u32(1);
  expect_error(b, {"metadata key #0", "byte offset 24", "not valid UTF-8"});
  Bytes t = header(1, 0);
  tensor_info(t, "w\xc3(", {8}, 0, 0).pad_to(32).zeros(32);
  expect_error(t, {"tensor info #0 name", "not valid UTF-8"});
}

TEST(GgufMalformed, DuplicateKeyAndTensorName) {
  Bytes b = header(0, 2);
  b.str("k").u32(4).u32(1).str("k").u32(4).u32(2);
  expect_error(b, {"metadata 'k' key", "byte offset 41", "duplicate metadata key"});
  Bytes t = header(2, 0);
  tensor_info(t, "w", {8}, 0, 0);
  tensor_info(t, "w", {8}, 0, 32);
  t.pad_to(32).zeros(64);
  expect_error(t, {"tensor info #1 name", "duplicate tensor name 'w'"});
}

TEST(GgufMalformed, UnknownTensorType) {
  Bytes t = header(1, 0);
  tensor_info(t, "w", {32}, 99, 0).pad_to(32).zeros(64);
  expect_error(t, {"tensor 'w' type", "unknown or unsupported tensor type id 99 (not a GGML type)",
                   "wisp reads F32, F16, Q4_0", "IQ4_XS", "MXFP4"});
  // A GGML type wisp lacks is named, with what wisp reads instead.
  Bytes g = header(1, 0);
  tensor_info(g, "w", {128}, 41, 0).pad_to(32).zeros(96);
  expect_error(g, {"tensor 'w' type", "type id 41 (GGML's Q1_0, which wisp does not implement)", "wisp reads F32"});
}

// Opened for `wisp info` (keep_unknown_types), the same file keeps its other tensors whole and the
// unknown one without a type or size; a misplaced offset is still an error.
TEST(GgufMalformed, UnknownTensorTypeKeptForInfo) {
  Bytes g = header(2, 0);
  tensor_info(g, "w", {128}, 41, 0);
  tensor_info(g, "v", {8}, 0, 96);
  g.pad_to(32).zeros(128);
  const GgufFile f = GgufFile::parse(g.b, "odd.gguf", {.keep_unknown_types = true});
  ASSERT_EQ(f.tensors().size(), 2u);
  const GgufTensor& w = f.tensor("w");
  EXPECT_EQ(w.type, nullptr);
  EXPECT_EQ(w.type_id, 41u);
  EXPECT_EQ(w.n_bytes, 0u);
  EXPECT_EQ(w.ne[0], 128);
  const GgufTensor& v = f.tensor("v");
  ASSERT_NE(v.type, nullptr);
  EXPECT_EQ(v.n_bytes, 32u);
  EXPECT_EQ(v.file_offset, f.data_offset() + 96);
  // Strict parsing (every loader) still refuses the file.
  expect_error(g, {"tensor 'w' type", "type id 41"});
  Bytes m = header(1, 0);
  tensor_info(m, "w", {128}, 41, 7).pad_to(32).zeros(64);
  EXPECT_THROW(GgufFile::parse(m.b, "odd.gguf", {.keep_unknown_types = true}), Error);
}

TEST(GgufMalformed, MisalignedTensorData) {
  Bytes t = header(1, 0);
  tensor_info(t, "w", {8}, 0, 4).pad_to(32).zeros(64);
  expect_error(t, {"tensor 'w' offset", "not a multiple of the alignment 32"});
}

TEST(GgufMalformed, TensorDataOutsideTheFile) {
  Bytes t = header(1, 0);
  tensor_info(t, "w", {8}, 0, 0).pad_to(32).zeros(16);  // needs 32 bytes, 16 present
  expect_error(t, {"tensor 'w' data", "outside the file"});
  Bytes far = header(1, 0);
  tensor_info(far, "w", {8}, 0, 1ull << 62).pad_to(32).zeros(32);
  expect_error(far, {"tensor 'w' data", "outside the file"});
  Bytes huge = header(1, 0);
  tensor_info(huge, "w", {~0ull - 31}, 0, 0).pad_to(32).zeros(32);  // size overflows int64
  expect_error(huge, {"tensor 'w' dimension 0", "invalid"});
}

TEST(GgufMalformed, ShapeProblems) {
  Bytes over = header(1, 0);
  tensor_info(over, "w", {1ull << 40, 1ull << 40}, 0, 0).pad_to(32).zeros(32);
  expect_error(over, {"tensor 'w' shape", "overflows"});
  Bytes dims = header(1, 0);
  tensor_info(dims, "w", {1, 1, 1, 1, 1}, 0, 0).pad_to(32).zeros(32);
  expect_error(dims, {"tensor 'w' n_dims", "outside [1, 4]"});
  Bytes zero = header(1, 0);
  tensor_info(zero, "w", {8, 0}, 0, 0).pad_to(32).zeros(32);
  expect_error(zero, {"tensor 'w' dimension 1", "size 0 is invalid"});
  Bytes block = header(1, 0);
  tensor_info(block, "w", {33}, 8, 0).pad_to(32).zeros(64);  // Q8_0 rows are multiples of 32
  expect_error(block, {"tensor 'w' shape", "not a multiple of the Q8_0 block size 32"});
}

TEST(GgufMalformed, BadAlignment) {
  Bytes b = header(0, 1);
  b.str("general.alignment").u32(4).u32(48);
  expect_error(b, {"general.alignment", "not a power of two"});
  Bytes s = header(0, 1);
  s.str("general.alignment").u32(8).str("32");
  expect_error(s, {"general.alignment", "expected an unsigned integer"});
}

TEST(GgufMalformed, NestingTooDeep) {
  Bytes b = header(0, 1);
  b.str("deep").u32(9);
  for (int i = 0; i < 20; ++i) b.u32(9).u64(1);
  b.zeros(64);
  expect_error(b, {"metadata 'deep' array", "nested deeper"});
}

// Every truncation of a valid file is an error that names the file, never a crash or a success
// with garbage (a file cut inside tensor data must not be accepted either).
TEST(GgufMalformed, EveryTruncationIsAnError) {
  GgufWriter w;
  w.set_string("general.architecture", "llama");
  w.set_strings("tokens", {"a", "bc"});
  w.set_f32s("scores", {1.0f, 2.0f});
  std::vector<std::uint8_t> data(34, 7);
  w.add_tensor("q", 8, {32}, data);
  std::vector<std::uint8_t> full = w.to_bytes();
  ASSERT_NO_THROW(GgufFile::parse(full, "ok.gguf"));
  for (std::size_t n = 0; n < full.size(); ++n) {
    std::vector<std::uint8_t> cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
    try {
      GgufFile::parse(cut, "cut.gguf");
      ADD_FAILURE() << "a file cut to " << n << " of " << full.size() << " bytes was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cut.gguf"), std::string::npos);
    }
  }
}

TEST(GgufMalformed, MissingFileAndDirectory) {
  EXPECT_THROW(GgufFile::open("/nonexistent/model.gguf"), Error);
  EXPECT_THROW(GgufFile::open("/tmp"), Error);
}

}  // namespace
}  // namespace wisp
