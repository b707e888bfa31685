// kernels::softmax and silu_mul in the float order of each x86 build of ggml against that build's
// own outputs (tests/golden/ggml_ops/<isa>.bin, written by scripts/gen_golden_softmax.py from the
// libggml-cpu that llama-cpp-python built on a machine of that ISA): the same bits, case by case.
// Each file is also run in the other build's order, which must differ somewhere, so the check
// can tell the two apart.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kernels/activations.h"
#include "kernels/ggml_order.h"

namespace wisp::kernels {
namespace {

struct OpCase {
  std::uint32_t op = 0;  // 0 softmax, 1 swiglu
  std::vector<float> a, b, want;
};

struct OpFile {
  ggml::Simd isa = ggml::Simd::kAvx512;
  std::vector<OpCase> cases;
};

OpFile read_ops(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::size_t at = 0;
  const auto u32 = [&] {
    if (at + 4 > bytes.size()) throw std::runtime_error(path.string() + ": truncated");
    std::uint32_t v;
    std::memcpy(&v, bytes.data() + at, 4);
    at += 4;
    return v;
  };
  const auto floats = [&](std::uint32_t n) {
    if (at + 4ull * n > bytes.size()) throw std::runtime_error(path.string() + ": truncated");
    std::vector<float> v(n);
    std::memcpy(v.data(), bytes.data() + at, 4ull * n);
    at += 4ull * n;
    return v;
  };
  if (bytes.size() < 16 || std::memcmp(bytes.data(), "WGOP", 4) != 0)
    throw std::runtime_error(path.string() + ": not a WGOP file");
  at = 4;
  if (u32() != 1) throw std::runtime_error(path.string() + ": unknown version");
  OpFile f;
  f.isa = u32() == 0 ? ggml::Simd::kAvx512 : ggml::Simd::kAvx2;
  const std::uint32_t count = u32();
  for (std::uint32_t i = 0; i < count; ++i) {
    OpCase c;
    c.op = u32();
    const std::uint32_t n = u32();
    c.a = floats(n);
    if (c.op == 1) c.b = floats(n);
    c.want = floats(n);
    f.cases.push_back(std::move(c));
  }
  return f;
}

// How many output floats of the file's cases differ in any bit when computed in `isa`'s order.
std::size_t differing(const OpFile& f, ggml::Simd isa, std::string* first) {
  std::size_t bad = 0;
  for (const OpCase& c : f.cases) {
    std::vector<float> got = c.a;
    if (c.op == 0) {
      softmax(got.data(), static_cast<std::int64_t>(got.size()), isa);
    } else {
      silu_mul(c.a.data(), c.b.data(), got.data(), static_cast<std::int64_t>(got.size()), isa);
    }
    for (std::size_t i = 0; i < got.size(); ++i) {
      if (std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(c.want[i])) continue;
      if (bad++ == 0 && first) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s n=%zu element %zu: got %a, ggml %a", c.op == 0 ? "softmax" : "swiglu",
                      got.size(), i, got[i], c.want[i]);
        *first = buf;
      }
    }
  }
  return bad;
}

TEST(GgmlOps, SoftmaxAndSwigluEqualTheBuildThatMadeEachFile) {
  const std::filesystem::path dir = std::filesystem::path(WISP_GOLDEN_DIR) / "ggml_ops";
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() != ".bin") continue;
    ++files;
    const OpFile f = read_ops(e.path());
    ASSERT_FALSE(f.cases.empty()) << e.path();
    std::string first;
    EXPECT_EQ(differing(f, f.isa, &first), 0u) << e.path() << ": " << first;
    const ggml::Simd other = f.isa == ggml::Simd::kAvx2 ? ggml::Simd::kAvx512 : ggml::Simd::kAvx2;
    const std::size_t in_other = differing(f, other, nullptr);
    std::printf("%s: %zu cases equal in their build's order; %zu floats differ in the other build's\n",
                e.path().filename().c_str(), f.cases.size(), in_other);
    EXPECT_GT(in_other, 0u) << e.path() << ": the two builds' orders are not told apart by these cases";
  }
  EXPECT_GE(files, 1u) << "no golden files in " << dir;
}

TEST(GgmlOps, Avx2ExpMatchesLibmClosely) {
  // Not an order check: the AVX2 exp replica is a ~1.5-ulp approximation, so it stays within a
  // few ulp of libm's expf over the range softmax feeds it, and its saturation ends are right.
  for (float x = -87.0f; x <= 0.0f; x += 0.37f) {
    const float want = std::exp(x);
    const float got = ggml::expf_avx2(x);
    EXPECT_NEAR(got, want, 4e-7f * want) << x;
  }
  EXPECT_EQ(ggml::expf_avx2(-INFINITY), 0.0f);
  EXPECT_EQ(ggml::expf_avx2(-200.0f), 0.0f);
  EXPECT_EQ(ggml::expf_avx2(0.0f), 1.0f);
  EXPECT_TRUE(std::isinf(ggml::expf_avx2(200.0f)));
  EXPECT_GT(ggml::expf_avx2(-100.0f), 0.0f);  // subnormal, not flushed
}

}  // namespace
}  // namespace wisp::kernels
