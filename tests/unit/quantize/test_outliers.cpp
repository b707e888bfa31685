// Outlier handling lowers the reconstruction error on weights with planted outliers.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "formats/block_types.h"
#include "formats/wq_format.h"
#include "quantize/row_quantizer.h"

namespace wisp::quantize {
namespace {

// Rows of N(0, 0.02) weights with one large outlier planted in every group of 32.
std::vector<float> planted(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = normal(rng);
  for (std::int64_t g = 0; g < n; g += 32) x[static_cast<std::size_t>(g + rng() % 32)] = (rng() % 2 ? 1 : -1) * 0.25f;
  return x;
}

double error_of(const char* type, const std::vector<float>& x, const RowOptions& ro,
                const std::vector<float>* w = nullptr) {
  const BlockTypeInfo& t = *find_block_type(type);
  const auto n = static_cast<std::int64_t>(x.size());
  std::vector<std::uint8_t> q(t.row_bytes(n));
  std::vector<float> y(x.size());
  quantize_row(t, x.data(), q.data(), n, ro, nullptr);
  t.dequantize(q.data(), y.data(), n);
  double e = 0;
  for (std::size_t i = 0; i < x.size(); ++i) e += (w ? (*w)[i] : 1.0) * (x[i] - y[i]) * (x[i] - y[i]);
  return e;
}

TEST(Outliers, RangeSearchLowersErrorForEveryWqType) {
  const auto x = planted(128 * 32, 5);
  for (const BlockTypeInfo& t : all_wq_block_types()) {
    if (wq_format(t.id).bits == 8) continue;  // 8 bits: the min/max grid is already fine; search may tie
    RowOptions plain, searched;
    searched.range_search = true;
    const double e0 = error_of(t.name, x, plain), e1 = error_of(t.name, x, searched);
    EXPECT_LT(e1, e0) << t.name;
    // At 2-3 bits the search wins clearly; at 4-6 bits clipping a 12-sigma outlier costs nearly as
    // much as it saves, so there it only has to win.
    if (wq_format(t.id).bits <= 3) EXPECT_LT(e1, 0.95 * e0) << t.name;
  }
}

TEST(Outliers, ImportanceWeightingLowersWeightedError) {
  // Salient channels (every 8th column, importance 50) are reconstructed better when the range
  // search weights their error.
  const std::int64_t n = 128 * 32;
  const auto x = planted(n, 9);
  std::vector<float> imp(static_cast<std::size_t>(n), 1.0f);
  for (std::int64_t i = 0; i < n; i += 8) imp[static_cast<std::size_t>(i)] = 50.0f;
  RowOptions uniform, weighted;
  uniform.range_search = weighted.range_search = true;
  weighted.importance = imp;
  EXPECT_LT(error_of("WQ3_G32", x, weighted, &imp), error_of("WQ3_G32", x, uniform, &imp));
}

}  // namespace
}  // namespace wisp::quantize
