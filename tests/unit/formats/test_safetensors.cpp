// SafetensorsFile: the reference fixtures (written by the `safetensors` package, see
// scripts/gen_golden_safetensors.py) read back as expected, and every class of malformed input
// is a wisp::Error that names what is wrong and where.

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fnv1a.h"
#include "formats/safetensors_file.h"
#include "safetensors_test_util.h"

namespace wisp {
namespace {

using st_test::error_of;
using st_test::expect_mentions;
using st_test::safetensors_image;

const std::string kGolden = std::string(WISP_GOLDEN_DIR) + "/safetensors";

std::string parse_error(std::string_view header, std::size_t data_len, std::uint64_t declared = UINT64_MAX) {
  auto image = safetensors_image(header, data_len, declared);
  return error_of([&] { SafetensorsFile::parse(image, "bad.safetensors"); });
}

// ---- reading valid files -------------------------------------------------------------------

TEST(SafetensorsFile, SingleFixtureMatchesReferenceWriter) {
  nlohmann::json expected = nlohmann::json::parse(std::ifstream(kGolden + "/expected.json"));
  const auto& single = expected["checkpoints"]["single"];
  auto f = SafetensorsFile::open(kGolden + "/single/model.safetensors");

  ASSERT_EQ(f.tensors().size(), single["tensors"].size());
  for (const auto& want : single["tensors"]) {
    const std::string name = want["name"];
    SCOPED_TRACE(name);
    const SafetensorsTensor& t = f.tensor(name);
    EXPECT_EQ(t.dtype_name(), want["dtype"].get<std::string>());
    EXPECT_EQ(t.shape, want["shape"].get<std::vector<std::int64_t>>());
    EXPECT_EQ(t.n_bytes(), want["n_bytes"].get<std::uint64_t>());
    EXPECT_EQ(test::fnv1a_hex(t.data, t.n_bytes()), want["fnv1a64"].get<std::string>());
  }
  std::map<std::string, std::string> meta(f.metadata().begin(), f.metadata().end());
  EXPECT_EQ(meta, (single["files"]["model.safetensors"]["metadata"].get<std::map<std::string, std::string>>()));
}

TEST(SafetensorsFile, ViewsPointIntoTheFileInDataOrder) {
  auto f = SafetensorsFile::open(kGolden + "/single/model.safetensors");
  std::uint64_t cursor = f.data_offset();
  for (const auto& t : f.tensors()) {
    EXPECT_EQ(t.file_offset, cursor) << t.name;  // ascending and contiguous
    EXPECT_EQ(t.file_offset, f.data_offset() + t.data_begin);
    cursor += t.n_bytes();
  }
  EXPECT_EQ(cursor, f.file_size());
  EXPECT_EQ(f.data_offset() % 8, 0u);  // the reference writer pads the header to 8 bytes

  EXPECT_EQ(f.tensor("model.layers.0.self_attn.rotary_scale").shape.size(), 0u);
  EXPECT_EQ(f.tensor("model.layers.0.self_attn.rotary_scale").n_elements, 1);
  EXPECT_EQ(f.tensor("model.empty").n_elements, 0);
  EXPECT_EQ(f.tensor("model.empty").n_bytes(), 0u);
  EXPECT_EQ(f.tensor("model.embed_tokens.weight").shape_string(), "[16, 8]");
}

TEST(SafetensorsFile, MoveKeepsViewsValid) {
  auto f = SafetensorsFile::open(kGolden + "/single/model.safetensors");
  const std::uint8_t* before = f.tensor("model.embed_tokens.weight").data;
  std::string hash = test::fnv1a_hex(before, f.tensor("model.embed_tokens.weight").n_bytes());
  SafetensorsFile moved = std::move(f);
  const auto& t = moved.tensor("model.embed_tokens.weight");
  EXPECT_EQ(t.data, before);
  EXPECT_EQ(test::fnv1a_hex(t.data, t.n_bytes()), hash);
}

TEST(SafetensorsFile, GgmlTypesOfWeightDtypes) {
  auto f = SafetensorsFile::open(kGolden + "/single/model.safetensors");
  EXPECT_EQ(f.ggml_type(f.tensor("model.embed_tokens.weight")), GgmlType::kF32);
  EXPECT_EQ(f.ggml_type(f.tensor("model.layers.0.self_attn.q_proj.weight")), GgmlType::kF16);
  EXPECT_EQ(f.ggml_type(f.tensor("model.norm.weight")), GgmlType::kBF16);
  EXPECT_EQ(static_cast<std::uint32_t>(f.ggml_type(f.tensor("model.norm.weight"))), 30u);
}

TEST(SafetensorsFile, OtherDtypesOpenButAreNotWeights) {
  auto image = safetensors_image(R"({"pos":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})", 16);
  auto f = SafetensorsFile::parse(image, "ids.safetensors");
  EXPECT_EQ(f.tensor("pos").dtype, SafetensorsDtype::kI64);
  expect_mentions(error_of([&] { f.ggml_type(f.tensor("pos")); }),
                  {"ids.safetensors", "tensor 'pos'", "I64", "F32, F16, BF16"});
}

TEST(SafetensorsFile, EveryNamedDtypeIsRecognised) {
  for (const char* name : {"BOOL", "U8", "I8", "I16", "U16", "F16", "BF16", "I32", "U32", "F32", "F64", "I64", "U64",
                           "F8_E4M3", "F8_E5M2", "F8_E8M0", "C64", "F4"}) {
    EXPECT_NE(find_safetensors_dtype(name), nullptr) << name;
  }
  EXPECT_EQ(find_safetensors_dtype("f32"), nullptr);  // names are case-sensitive in the format
}

TEST(SafetensorsFile, EntriesInAnyJsonOrderAreSortedByOffset) {
  // "b" sorts first by name but its data comes second.
  auto image = safetensors_image(R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},)"
                                 R"("a":{"dtype":"F16","shape":[2],"data_offsets":[0,4]},)"
                                 R"("z":{"dtype":"F32","shape":[0],"data_offsets":[8,8]}})",
                                 8);
  auto f = SafetensorsFile::parse(image, "mem");
  ASSERT_EQ(f.tensors().size(), 3u);
  EXPECT_EQ(f.tensors()[0].name, "a");
  EXPECT_EQ(f.tensors()[1].name, "b");
  EXPECT_EQ(f.tensors()[2].name, "z");
  EXPECT_EQ(f.tensor("b").data, image.data() + 8 + f.header_size() + 4);
}

TEST(SafetensorsFile, EmptyHeaderAndPaddingAreValid) {
  auto image = safetensors_image("{}      ", 0);  // writers pad the header with spaces
  EXPECT_TRUE(SafetensorsFile::parse(image, "mem").tensors().empty());
}

TEST(SafetensorsFile, MissingTensorLookupNamesTheFile) {
  auto f = SafetensorsFile::open(kGolden + "/single/model.safetensors");
  EXPECT_EQ(f.find_tensor("nope"), nullptr);
  expect_mentions(error_of([&] { f.tensor("nope"); }), {"model.safetensors", "'nope'"});
}

// ---- malformed: the 8-byte length and the header region ------------------------------------

TEST(SafetensorsMalformed, FileShorterThanLengthField) {
  std::vector<std::uint8_t> four = {1, 0, 0, 0};
  expect_mentions(error_of([&] { SafetensorsFile::parse(four, "tiny.safetensors"); }),
                  {"tiny.safetensors", "4 bytes", "byte offset 0"});
}

TEST(SafetensorsMalformed, OpenMissingFileNamesPath) {
  expect_mentions(error_of([] { SafetensorsFile::open("/nonexistent/x.safetensors"); }),
                  {"/nonexistent/x.safetensors"});
}

TEST(SafetensorsMalformed, HeaderLengthPastEof) {
  expect_mentions(parse_error("{}", 0, 4096), {"bad.safetensors", "header length 4096", "byte offset 0",
                                               "past the end of the file", "file size is 10"});
}

TEST(SafetensorsMalformed, HeaderLengthAbsurd) {
  expect_mentions(parse_error("{}", 0, 100'000'001), {"bad.safetensors", "header length 100000001", "limit"});
  expect_mentions(parse_error("{}", 0, UINT64_MAX - 1), {"exceeds"});  // no wrap-around in 8 + N
}

TEST(SafetensorsMalformed, InvalidJson) {
  // '1' is the 6th header byte, so file byte 8 + 5.
  expect_mentions(parse_error(R"({"a" 1})", 0), {"bad.safetensors", "invalid JSON", "byte offset 13"});
  expect_mentions(parse_error(R"({"a": {"dtype": "F32",)", 0), {"invalid JSON"});
  expect_mentions(parse_error("", 0), {"invalid JSON", "byte offset 8"});
}

TEST(SafetensorsMalformed, HeaderNotAnObject) {
  expect_mentions(parse_error("[1, 2]", 0), {"bad.safetensors", "header is a JSON array", "expected an object"});
  expect_mentions(parse_error("\"x\"", 0), {"header is a JSON string"});
}

TEST(SafetensorsMalformed, NonUtf8Name) {
  // The 0xff is the 4th header byte: file byte 8 + 3. The message shows it escaped, not raw.
  std::string msg = parse_error("{\"w\xff\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}", 4);
  expect_mentions(msg, {"bad.safetensors", "UTF-8", "byte offset 11", "\\xff"});
  EXPECT_EQ(msg.find('\xff'), std::string::npos);
  // A lone surrogate escape is not valid UTF-8 either.
  expect_mentions(parse_error(R"({"\ud800":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})", 4),
                  {"invalid JSON", "surrogate"});
}

TEST(SafetensorsMalformed, NameWithNul) {
  expect_mentions(parse_error(R"({"a\u0000b":{"dtype":"F32","shape":[],"data_offsets":[0,4]}})", 4),
                  {"tensor 'a\\x00b'", "NUL"});
}

TEST(SafetensorsMalformed, DuplicateTensorName) {
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                              8),
                  {"bad.safetensors", "duplicate", "'w'", "top level"});
}

TEST(SafetensorsMalformed, DuplicateFieldInsideTensor) {
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","dtype":"F16","shape":[1],"data_offsets":[0,4]}})", 4),
                  {"duplicate", "'dtype'", "inside 'w'"});
}

TEST(SafetensorsMalformed, NestingTooDeep) {
  expect_mentions(parse_error(std::string(100, '[') + std::string(100, ']'), 0), {"nested deeper"});
}

// ---- malformed: tensor entries -------------------------------------------------------------

TEST(SafetensorsMalformed, EntryNotAnObject) {
  expect_mentions(parse_error(R"({"w": 3})", 0), {"tensor 'w'", "JSON number", "JSON header, byte offsets 8..16"});
}

TEST(SafetensorsMalformed, MissingFields) {
  expect_mentions(parse_error(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", 4),
                  {"bad.safetensors", "tensor 'w'", "missing field 'dtype'"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", 4),
                  {"tensor 'w'", "missing field 'shape'"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[1]}})", 4),
                  {"tensor 'w'", "missing field 'data_offsets'"});
}

TEST(SafetensorsMalformed, WrongFieldTypes) {
  expect_mentions(parse_error(R"({"w":{"dtype":5,"shape":[1],"data_offsets":[0,4]}})", 4),
                  {"tensor 'w'", "field 'dtype' is a JSON number"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":"1","data_offsets":[0,4]}})", 4),
                  {"tensor 'w'", "field 'shape' is a JSON string"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4),
                  {"tensor 'w'", "'shape' element 0", "non-negative integer"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[1.5],"data_offsets":[0,4]}})", 4),
                  {"'shape' element 0", "non-negative integer"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":{"a":0}}})", 4),
                  {"tensor 'w'", "field 'data_offsets'", "two integers"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})", 4),
                  {"field 'data_offsets'", "two integers"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":["0",4]}})", 4),
                  {"field 'data_offsets'", "non-negative integers"});
}

TEST(SafetensorsMalformed, UnknownDtype) {
  expect_mentions(parse_error(R"({"w":{"dtype":"F12","shape":[1],"data_offsets":[0,4]}})", 4),
                  {"tensor 'w'", "unknown dtype \"F12\""});
}

TEST(SafetensorsMalformed, MetadataMustBeStrings) {
  expect_mentions(parse_error(R"({"__metadata__": ["a"]})", 0), {"'__metadata__'", "JSON array"});
  expect_mentions(parse_error(R"({"__metadata__": {"format": 1}})", 0),
                  {"'__metadata__' entry 'format'", "JSON number", "expected a string"});
}

TEST(SafetensorsMalformed, ShapeTimesDtypeSizeDiffersFromSpan) {
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
                  {"bad.safetensors", "tensor 'w'", "needs 12 bytes", "span 8 bytes", "byte offset"});
}

TEST(SafetensorsMalformed, SubByteDtypeNotWholeBytes) {
  expect_mentions(parse_error(R"({"w":{"dtype":"F4","shape":[3],"data_offsets":[0,2]}})", 2),
                  {"tensor 'w'", "12 bits", "whole number of bytes"});
}

TEST(SafetensorsMalformed, ShapeProductOverflow) {
  // 2^32 * 2^32 wraps to 0 in 64 bits; 2^62 F32 elements need 2^64 bytes; 2^63 is past int64.
  for (const char* shape : {"[4294967296,4294967296]", "[4611686018427387904]", "[9223372036854775808]",
                            "[3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,0]"}) {
    SCOPED_TRACE(shape);
    std::string header = std::string(R"({"w":{"dtype":"F32","shape":)") + shape + R"(,"data_offsets":[0,0]}})";
    expect_mentions(parse_error(header, 0), {"tensor 'w'", "field 'shape'", "overflows"});
  }
}

TEST(SafetensorsMalformed, OffsetsPastTheDataRegion) {
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8),
                  {"bad.safetensors", "tensor 'w'", "past the data region", "file is"});
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[18446744073709551612,)"
                              R"(18446744073709551615]}})",
                              4),
                  {"tensor 'w'", "past the data region"});
}

TEST(SafetensorsMalformed, BeginAfterEnd) {
  expect_mentions(parse_error(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", 8),
                  {"tensor 'w'", "begin after end"});
}

TEST(SafetensorsMalformed, OverlappingSpans) {
  expect_mentions(parse_error(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                              8),
                  {"bad.safetensors", "overlaps", "'a'", "'b'", "byte offset"});
  // Two tensors on the very same bytes.
  expect_mentions(parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"I32","shape":[1],"data_offsets":[0,4]}})",
                              4),
                  {"overlaps"});
}

TEST(SafetensorsMalformed, GapBetweenSpans) {
  expect_mentions(parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                              R"("b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})",
                              12),
                  {"gap of 4 unused bytes", "'b'", "contiguous"});
  expect_mentions(parse_error(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", 8),
                  {"gap of 4 unused bytes before tensor 'a'"});
}

TEST(SafetensorsMalformed, TrailingBytesAfterLastTensor) {
  auto header = std::string(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})");
  std::string at = "byte offset " + std::to_string(8 + header.size() + 4);
  expect_mentions(parse_error(header, 7), {"3 unused bytes after the last tensor", at});
}

}  // namespace
}  // namespace wisp
