// The block-type registry and its scalar reference kernels against the `gguf` Python package
// (golden data in tests/golden/dequant/, written by scripts/gen_golden_dequant.py):
// every type dequantizes bit-exact, every quantizable type quantizes to the same bytes, and every
// tensor of both real models dequantizes to the package's values.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "fnv1a.h"
#include "formats/block_layouts.h"
#include "formats/block_types.h"
#include "formats/gguf_file.h"
#include "formats/half.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using nlohmann::json;

std::string dequant_golden(const std::string& file) { return std::string(WISP_GOLDEN_DIR) + "/dequant/" + file; }

json load_json(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot open golden file " + path);
  return json::parse(in);
}

// The "fnv1a_rows" hash of the generator: FNV-1a-64 of each dequantized row's float32 bytes, then
// FNV-1a-64 of those digests (u64 little-endian). Streams row by row, so a 167M-value embedding
// never needs a full float copy. Row 0 and the last row's first values are kept for diagnostics.
struct DequantDigest {
  std::string hash;
  std::vector<float> row0, row_last;
};

DequantDigest dequant_rows_hash(const GgufTensor& t) {
  const std::int64_t n_rows = t.n_rows();
  const std::uint64_t row_bytes = t.row_bytes();
  std::vector<float> row(static_cast<std::size_t>(t.ne[0]));
  test::Fnv1a outer;
  DequantDigest d;
  for (std::int64_t r = 0; r < n_rows; ++r) {
    t.type->dequantize(t.data + r * row_bytes, row.data(), t.ne[0]);
    test::Fnv1a h;
    h.update(row.data(), row.size() * sizeof(float));
    const std::uint64_t digest = h.value();
    outer.update(&digest, sizeof digest);
    if (r == 0) d.row0.assign(row.begin(), row.begin() + std::min<std::size_t>(8, row.size()));
    if (r == n_rows - 1) d.row_last.assign(row.begin(), row.begin() + std::min<std::size_t>(8, row.size()));
  }
  d.hash = outer.hex();
  return d;
}

std::vector<std::int64_t> shape_of(const GgufTensor& t) { return {t.ne, t.ne + t.n_dims}; }

std::string floats_to_string(const std::vector<float>& v) {
  std::string s;
  for (float x : v) s += std::to_string(x) + " ";
  return s;
}

// ---- registry facts -------------------------------------------------------------------------------

struct KnownType {
  const char* name;
  std::uint32_t id;
  std::int64_t block_elems;
  std::size_t block_bytes;
  double bpw;
  bool quantizable;
};

// Sizes as GGML defines them (gguf.constants.GGML_QUANT_SIZES).
constexpr KnownType kKnown[] = {
    {"F32", 0, 1, 4, 32.0, true},
    {"F16", 1, 1, 2, 16.0, true},
    {"Q4_0", 2, 32, 18, 4.5, true},
    {"Q4_1", 3, 32, 20, 5.0, true},
    {"Q5_0", 6, 32, 22, 5.5, true},
    {"Q5_1", 7, 32, 24, 6.0, true},
    {"Q8_0", 8, 32, 34, 8.5, true},
    {"Q2_K", 10, 256, 84, 2.625, false},
    {"Q3_K", 11, 256, 110, 3.4375, false},
    {"Q4_K", 12, 256, 144, 4.5, false},
    {"Q5_K", 13, 256, 176, 5.5, false},
    {"Q6_K", 14, 256, 210, 6.5625, false},
    {"IQ2_XXS", 16, 256, 66, 2.0625, false},
    {"IQ2_XS", 17, 256, 74, 2.3125, false},
    {"IQ3_XXS", 18, 256, 98, 3.0625, false},
    {"IQ1_S", 19, 256, 50, 1.5625, false},
    {"IQ4_NL", 20, 32, 18, 4.5, false},
    {"IQ3_S", 21, 256, 110, 3.4375, false},
    {"IQ2_S", 22, 256, 82, 2.5625, false},
    {"IQ4_XS", 23, 256, 136, 4.25, false},
    {"IQ1_M", 29, 256, 56, 1.75, false},
    {"BF16", 30, 1, 2, 16.0, true},
    {"TQ1_0", 34, 256, 54, 1.6875, false},
    {"TQ2_0", 35, 256, 66, 2.0625, false},
    {"MXFP4", 39, 32, 17, 4.25, false},
    {"NVFP4", 40, 64, 36, 4.5, false},
};

TEST(BlockTypes, RegistryMatchesGgmlSizes) {
  auto all = all_block_types();
  ASSERT_EQ(all.size(), std::size(kKnown));
  for (std::size_t i = 0; i < all.size(); ++i) {
    const KnownType& k = kKnown[i];
    const BlockTypeInfo& t = all[i];
    SCOPED_TRACE(k.name);
    EXPECT_EQ(t.id, k.id);
    EXPECT_STREQ(t.name, k.name);
    EXPECT_EQ(t.block_elems, k.block_elems);
    EXPECT_EQ(t.block_bytes, k.block_bytes);
    EXPECT_DOUBLE_EQ(t.bits_per_weight(), k.bpw);
    EXPECT_NE(t.dequantize, nullptr);
    EXPECT_EQ(t.quantize != nullptr, k.quantizable);
    EXPECT_EQ(find_block_type(k.id), &t);
    EXPECT_EQ(&block_type(static_cast<GgmlType>(k.id)), &t);
    if (i > 0) {
      EXPECT_LT(all[i - 1].id, t.id) << "all_block_types() must be in id order";
    }
  }
  EXPECT_EQ(block_type(GgmlType::kQ4_K).row_bytes(640), 2u * 144u);
  EXPECT_EQ(block_type(GgmlType::kQ4_1).row_bytes(576), 18u * 20u);
}

TEST(BlockTypes, LookupByNameIsCaseInsensitive) {
  EXPECT_EQ(find_block_type("q4_k"), &block_type(GgmlType::kQ4_K));
  EXPECT_EQ(find_block_type("Bf16"), &block_type(GgmlType::kBF16));
  EXPECT_EQ(find_block_type("Q4_1"), &block_type(GgmlType::kQ4_1));
  EXPECT_EQ(find_block_type("Q4"), nullptr);
  EXPECT_EQ(find_block_type(""), nullptr);
  EXPECT_EQ(find_block_type("iq4_xs"), &block_type(GgmlType::kIQ4_XS));
  EXPECT_EQ(find_block_type("MXFP4"), &block_type(GgmlType::kMXFP4));
  EXPECT_EQ(find_block_type("nvfp4"), &block_type(GgmlType::kNVFP4));
}

TEST(BlockTypes, UnimplementedIdsAreAbsent) {
  EXPECT_EQ(find_block_type(4u), nullptr);   // removed Q4_2
  EXPECT_EQ(find_block_type(9u), nullptr);   // Q8_1: no reference in the gguf package
  EXPECT_EQ(find_block_type(15u), nullptr);  // Q8_K: likewise
  EXPECT_EQ(find_block_type(24u), nullptr);  // I8: an integer tensor, not a block type of weights
  EXPECT_EQ(find_block_type(41u), nullptr);  // Q1_0: not in the gguf package's dequantize set
  EXPECT_EQ(find_block_type(0xffffffffu), nullptr);
  EXPECT_THROW(block_type(GgmlType::kQ8_K), Error);
}

TEST(BlockTypes, GgmlNamesCoverUnimplementedTypes) {
  // Names as gguf.constants.GGMLQuantizationType spells them, implemented or not.
  EXPECT_STREQ(ggml_type_name(16), "IQ2_XXS");
  EXPECT_STREQ(ggml_type_name(29), "IQ1_M");
  EXPECT_STREQ(ggml_type_name(39), "MXFP4");
  EXPECT_STREQ(ggml_type_name(23), "IQ4_XS");
  EXPECT_EQ(ggml_type_name(4), nullptr);
  EXPECT_EQ(ggml_type_name(33), nullptr);
  EXPECT_EQ(ggml_type_name(1000), nullptr);
  for (const BlockTypeInfo& t : all_block_types()) EXPECT_STREQ(ggml_type_name(t.id), t.name);
  const std::string names = supported_block_type_names();
  EXPECT_EQ(names.rfind("F32, F16, Q4_0, Q4_1,", 0), 0u) << names;
  for (const BlockTypeInfo& t : all_block_types()) EXPECT_NE(names.find(t.name), std::string::npos) << t.name;
  try {
    block_type(GgmlType::kQ8_K);
    ADD_FAILURE() << "Q8_K is not a weight type wisp reads";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("(Q8_K)"), std::string::npos) << e.what();
  }
}

// ---- half and bfloat16 ----------------------------------------------------------------------------

static_assert(f16_to_f32(0x3c00) == 1.0f && f16_to_f32(0xc000) == -2.0f && f16_to_f32(0x7bff) == 65504.0f);
static_assert(f32_to_f16(1.0f) == 0x3c00 && f32_to_f16(65519.0f) == 0x7bff && f32_to_f16(65520.0f) == 0x7c00);
static_assert(bf16_to_f32(0x3f80) == 1.0f && f32_to_bf16(1.0f) == 0x3f80);

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }
float from_bits(std::uint32_t u) { return std::bit_cast<float>(u); }

TEST(Half, EveryHalfDecodesToItsValue) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const std::uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    const float sign = (h & 0x8000) ? -1.0f : 1.0f;
    const float got = f16_to_f32(static_cast<std::uint16_t>(h));
    if (exp == 0x1f) {
      if (mant == 0) {
        EXPECT_EQ(got, sign * std::numeric_limits<float>::infinity()) << h;
      } else {
        EXPECT_TRUE(std::isnan(got)) << h;
        EXPECT_EQ(bits(got), ((h & 0x8000u) << 16) | 0x7f800000u | (mant << 13)) << "NaN payload kept, " << h;
      }
      continue;
    }
    // Independent of the bit manipulation: value = mant * 2^-24 (subnormal) or (1024 + mant) * 2^(exp-25).
    const float want = exp == 0 ? sign * std::ldexp(static_cast<float>(mant), -24)
                                : sign * std::ldexp(static_cast<float>(1024 + mant), static_cast<int>(exp) - 25);
    ASSERT_EQ(bits(got), bits(want)) << "half 0x" << std::hex << h;
    // And back: every half survives a round trip through float.
    ASSERT_EQ(f32_to_f16(got), h) << "half 0x" << std::hex << h;
  }
}

TEST(Half, RoundsToNearestEven) {
  // Between adjacent halves: below the midpoint rounds down, above rounds up, a tie goes to even.
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const auto h = static_cast<std::uint16_t>(rng() % 0x7bff);  // positive finite, below the max
    const float lo = f16_to_f32(h), hi = f16_to_f32(static_cast<std::uint16_t>(h + 1));
    const float mid = (lo + hi) / 2;  // exact: the halves differ in few bits
    const std::uint16_t even = (h & 1) ? static_cast<std::uint16_t>(h + 1) : h;
    ASSERT_EQ(f32_to_f16(mid), even) << h;
    ASSERT_EQ(f32_to_f16(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(f32_to_f16(std::nextafter(mid, 1e9f)), h + 1) << h;
    ASSERT_EQ(f32_to_f16(-mid), even | 0x8000) << h;
  }
  EXPECT_EQ(f32_to_f16(from_bits(0x33000000)), 0x0000);  // 2^-25: tie between 0 and 2^-24 -> 0
  EXPECT_EQ(f32_to_f16(from_bits(0x33000001)), 0x0001);
  EXPECT_EQ(f32_to_f16(from_bits(0xb3000000)), 0x8000);  // signed zero kept
  EXPECT_EQ(f32_to_f16(1e-30f), 0x0000);
  EXPECT_EQ(f32_to_f16(from_bits(0x387fe000)), 0x0400);  // rounds up into the smallest normal
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(f32_to_f16(from_bits(0x7fc00000)), 0x7e00);  // numpy's NaN conversion: payload top bits
  EXPECT_EQ(f32_to_f16(from_bits(0x7f800001)), 0x7c01);  // ... forced nonzero, not quieted
  EXPECT_EQ(f32_to_f16(from_bits(0xffa00000)), 0xfd00);
}

TEST(BFloat16, RoundsLikeGgml) {
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808000)), 0x3f80);  // tie -> even
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f818000)), 0x3f82);  // tie -> even (up)
  EXPECT_EQ(f32_to_bf16(from_bits(0x3f808001)), 0x3f81);
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f7fffff)), 0x7f80);  // the float max overflows to inf
  EXPECT_EQ(f32_to_bf16(from_bits(0x7f800001)), 0x7fc0);  // signaling NaN is quieted, not inf
  EXPECT_EQ(f32_to_bf16(from_bits(0xffffffff)), 0xffff);
  for (std::uint32_t b = 0; b < 65536; ++b) {
    ASSERT_EQ(bits(bf16_to_f32(static_cast<std::uint16_t>(b))), b << 16);
    if (((b >> 7) & 0xff) != 0xff || (b & 0x7f) == 0 || (b & 0x40)) {  // all but signaling NaNs round-trip
      ASSERT_EQ(f32_to_bf16(bf16_to_f32(static_cast<std::uint16_t>(b))), b) << b;
    }
  }
}

// ---- synthetic golden data ------------------------------------------------------------------------

class SyntheticGolden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    file_ = new GgufFile(GgufFile::open(dequant_golden("synthetic.gguf")));
    want_ = new json(load_json(dequant_golden("synthetic.json")));
  }
  static void TearDownTestSuite() {
    delete file_;
    delete want_;
    file_ = nullptr;
    want_ = nullptr;
  }
  static GgufFile* file_;
  static json* want_;
};
GgufFile* SyntheticGolden::file_ = nullptr;
json* SyntheticGolden::want_ = nullptr;

TEST_F(SyntheticGolden, CoversEveryRegisteredType) {
  for (const BlockTypeInfo& t : all_block_types()) {
    bool dequant = false, quant = false;
    for (const json& e : (*want_)["tensors"]) {
      if (e["type"] != t.name) continue;
      dequant = true;
      quant = quant || e.contains("src");
    }
    EXPECT_TRUE(dequant) << t.name << " has no synthetic dequantize case";
    EXPECT_EQ(quant, t.quantize != nullptr) << t.name << ": synthetic quantize cases vs registry";
  }
}

TEST_F(SyntheticGolden, EveryTypeDequantizesBitExact) {
  int checked = 0;
  for (const json& e : (*want_)["tensors"]) {
    const std::string name = e["name"];
    SCOPED_TRACE(name);
    const GgufTensor& t = file_->tensor(name);
    EXPECT_STREQ(t.type->name, e["type"].get<std::string>().c_str());
    EXPECT_EQ(shape_of(t), e["ne"].get<std::vector<std::int64_t>>());
    EXPECT_EQ(dequant_rows_hash(t).hash, e["fnv1a_rows"].get<std::string>());
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

TEST_F(SyntheticGolden, EveryQuantizableTypeQuantizesToTheSameBytes) {
  int checked = 0;
  for (const json& e : (*want_)["tensors"]) {
    if (!e.contains("src")) continue;
    const std::string name = e["name"];
    SCOPED_TRACE(name);
    const GgufTensor& src = file_->tensor(e["src"].get<std::string>());
    const GgufTensor& want = file_->tensor(name);
    ASSERT_EQ(src.type->id, 0u) << "sources are stored as F32";
    ASSERT_EQ(src.n_elements(), want.n_elements());
    EXPECT_EQ(test::fnv1a_hex(src.data, src.n_bytes), e["src_fnv1a"].get<std::string>());
    EXPECT_EQ(test::fnv1a_hex(want.data, want.n_bytes), e["quant_fnv1a"].get<std::string>());

    // Quantize row by row, as a converter would, from an aligned copy of the source.
    std::vector<float> in(static_cast<std::size_t>(src.n_elements()));
    std::memcpy(in.data(), src.data, src.n_bytes);
    std::vector<std::uint8_t> got(want.n_bytes);
    const std::uint64_t out_row = want.row_bytes();
    for (std::int64_t r = 0; r < want.n_rows(); ++r) {
      want.type->quantize(in.data() + r * want.ne[0], got.data() + r * out_row, want.ne[0]);
    }
    std::size_t first_diff = got.size();
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (got[i] != want.data[i]) {
        first_diff = i;
        break;
      }
    }
    EXPECT_EQ(first_diff, got.size()) << "first differing byte " << first_diff << " (block "
                                      << first_diff / want.type->block_bytes << "): got "
                                      << int(got[first_diff < got.size() ? first_diff : 0]) << ", gguf wrote "
                                      << int(want.data[first_diff < got.size() ? first_diff : 0]);
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

// ---- real models ----------------------------------------------------------------------------------

class RealModelDequant : public ::testing::TestWithParam<const char*> {};

TEST_P(RealModelDequant, EveryTensorMatchesGguf) {
  const std::string stem = GetParam();
  const std::string path = std::string(WISP_MODELS_DIR) + "/" + stem + ".gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is missing (fetch it with scripts/fetch_models)";
  const json want = load_json(dequant_golden(stem + ".json"));
  const GgufFile f = GgufFile::open(path);
  ASSERT_EQ(f.tensors().size(), want["tensors"].size());
  for (const json& e : want["tensors"]) {
    const std::string name = e["name"];
    SCOPED_TRACE(name);
    const GgufTensor& t = f.tensor(name);
    EXPECT_STREQ(t.type->name, e["type"].get<std::string>().c_str());
    EXPECT_EQ(shape_of(t), e["ne"].get<std::vector<std::int64_t>>());
    const DequantDigest got = dequant_rows_hash(t);
    EXPECT_EQ(got.hash, e["fnv1a_rows"].get<std::string>())
        << "row 0 starts " << floats_to_string(got.row0) << "; gguf: " << e["row0"].dump() << "\nlast row starts "
        << floats_to_string(got.row_last) << "; gguf: " << e["row_last"].dump();
    // The samples are independent of the hash scheme: a mismatch here localizes a hash failure.
    const auto want0 = e["row0"].get<std::vector<float>>();
    const auto want_last = e["row_last"].get<std::vector<float>>();
    EXPECT_EQ(got.row0, want0);
    EXPECT_EQ(got.row_last, want_last);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, RealModelDequant,
                         ::testing::Values("SmolLM2-135M-Instruct.Q4_1", "gemma-3-270m-q4_k_m"));

// ---- round trips and edge cases -------------------------------------------------------------------

// For a group of 32 values `x`, the largest |x - dequant(quant(x))| the type's rounding allows,
// with room for the half-precision rounding of d and m (relative 2^-11 each, times the largest code).
float round_trip_bound(const BlockTypeInfo& t, const float* x) {
  float mn = x[0], mx = x[0], amax = 0;
  for (int j = 0; j < 32; ++j) {
    mn = std::min(mn, x[j]);
    mx = std::max(mx, x[j]);
    amax = std::max(amax, std::fabs(x[j]));
  }
  const float h = 1.0f / 2048;      // half-float relative rounding
  const float tiny = 1e-6f * amax;  // float32 rounding of 1/d and the scaled value
  switch (static_cast<GgmlType>(t.id)) {
    // Symmetric 4/5-bit: the extreme opposite in sign to the largest magnitude lands one step past
    // the top code and saturates, so the bound is a full step d.
    case GgmlType::kQ4_0: return amax / 8 * (1 + 8 * h) + tiny;
    case GgmlType::kQ5_0: return amax / 16 * (1 + 16 * h) + tiny;
    case GgmlType::kQ8_0: return amax / 127 * (0.5f + 127 * h) + tiny;
    case GgmlType::kQ4_1: return (mx - mn) / 15 * (0.5f + 15 * h) + std::fabs(mn) * h + tiny;
    case GgmlType::kQ5_1: return (mx - mn) / 31 * (0.5f + 31 * h) + std::fabs(mn) * h + tiny;
    case GgmlType::kF16: return amax * h;
    case GgmlType::kBF16: return amax / 256;
    default: return 0;  // F32 is exact
  }
}

TEST(BlockTypes, QuantizeDequantizeRoundTripWithinBound) {
  std::mt19937 rng(1234);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (const BlockTypeInfo& t : all_block_types()) {
    if (t.quantize == nullptr) continue;
    SCOPED_TRACE(t.name);
    const std::int64_t n = 32 * 64;
    std::vector<float> x(n), y(n);
    for (std::int64_t i = 0; i < n; ++i) x[i] = normal(rng) * (i < n / 2 ? 1.0f : 100.0f);
    std::vector<std::uint8_t> q(t.row_bytes(n));
    t.quantize(x.data(), q.data(), n);
    t.dequantize(q.data(), y.data(), n);
    for (std::int64_t b = 0; b < n; b += 32) {
      const float bound = round_trip_bound(t, x.data() + b);
      for (int j = 0; j < 32; ++j) ASSERT_LE(std::fabs(x[b + j] - y[b + j]), bound) << "value " << b + j;
    }
  }
}

TEST(BlockTypes, ConstantAndZeroBlocksSurvive) {
  // A constant block must not divide by zero. Zero comes back as zero everywhere; the asymmetric
  // types store a constant as the minimum with d = 0, and the symmetric 4/5-bit ones as d = c/-8
  // (c/-16), exact when that is a half-float value, as it is for these constants.
  for (const char* name : {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0"}) {
    const BlockTypeInfo& t = *find_block_type(name);
    SCOPED_TRACE(name);
    for (float c : {0.0f, 1.5f, -3.25f}) {
      if (c != 0.0f && std::string(name) == "Q8_0") continue;  // c/127 is not a half: not exact
      std::vector<float> x(32, c), y(32, 123.0f);
      std::vector<std::uint8_t> q(t.block_bytes);
      t.quantize(x.data(), q.data(), 32);
      t.dequantize(q.data(), y.data(), 32);
      for (float v : y) EXPECT_EQ(v, c);
    }
  }
}

TEST(BlockTypes, PartialBlocksAreRejected) {
  std::vector<std::uint8_t> buf(1024);
  std::vector<float> f(1024);
  for (const BlockTypeInfo& t : all_block_types()) {
    SCOPED_TRACE(t.name);
    t.dequantize(buf.data(), f.data(), 0);  // an empty range is fine
    EXPECT_THROW(t.dequantize(buf.data(), f.data(), -1), Error);
    if (t.block_elems == 1) continue;
    try {
      t.dequantize(buf.data(), f.data(), t.block_elems + 1);
      ADD_FAILURE() << "a tail of one value was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(t.name), std::string::npos) << "message names the type: " << e.what();
    }
    if (t.quantize != nullptr) {
      EXPECT_THROW(t.quantize(f.data(), buf.data(), t.block_elems / 2), Error);
    }
  }
}

TEST(BlockTypes, UnalignedBlocksDecodeTheSame) {
  // Blocks are read by copy, so a source at an odd address (a GGUF data section is only aligned
  // to its alignment, rows of 18-byte blocks are not) gives the same values.
  std::mt19937 rng(99);
  for (const BlockTypeInfo& t : all_block_types()) {
    SCOPED_TRACE(t.name);
    const std::int64_t n = t.block_elems * 2;
    std::vector<std::uint8_t> a(t.row_bytes(n) + 1);
    for (auto& b : a) b = static_cast<std::uint8_t>(rng());  // NaN results compare bitwise: fine
    std::vector<float> y0(n), y1(n);
    std::vector<std::uint8_t> aligned(a.begin() + 1, a.end());
    t.dequantize(aligned.data(), y0.data(), n);
    t.dequantize(a.data() + 1, y1.data(), n);
    EXPECT_EQ(std::memcmp(y0.data(), y1.data(), n * sizeof(float)), 0);
  }
}

}  // namespace
}  // namespace wisp
