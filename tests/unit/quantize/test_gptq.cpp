// GPTQ (src/quantize/gptq.*): codes equal a numpy implementation of the same algorithm
// (scripts/gen_golden_gptq.py, golden in tests/golden/gptq/), the Hessian accumulated in chunks
// equals one pass, the output error grows with damping towards round-to-nearest within a bound,
// and on a planted-outlier layer GPTQ's output error is below the range search's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "formats/half.h"
#include "formats/wq_format.h"
#include "quantize/gptq.h"
#include "quantize/row_quantizer.h"
#include "wisp/error.h"

namespace wisp::quantize {
namespace {

struct GoldenCase {
  int bits = 0, group = 0;
  bool act_order = false;
  double damp = 0;
  std::vector<int> codes, scales, zeros;
};

struct Golden {
  std::int64_t n = 0, rows = 0, N = 0;
  std::vector<float> x;  // N x n
  std::vector<float> w;  // rows x n
  double hsum = 0;
  std::vector<GoldenCase> cases;
};

template <class T>
void read_section(std::istream& in, const char* key, std::size_t count, std::vector<T>& out) {
  std::string k;
  in >> k;
  ASSERT_EQ(k, key);
  out.resize(count);
  for (auto& v : out) {
    double d;
    in >> d;
    v = static_cast<T>(d);
  }
  ASSERT_TRUE(in.good()) << key;
}

Golden load_golden() {
  Golden g;
  std::ifstream in(WISP_GOLDEN_DIR "/gptq/layer.txt");
  EXPECT_TRUE(in.good()) << "tests/golden/gptq/layer.txt (scripts/gen_golden_gptq.py)";
  std::string line, k;
  std::getline(in, line);  // comment
  in >> k >> g.n >> k >> g.rows >> k >> g.N;
  std::vector<int> xi;
  read_section(in, "X", static_cast<std::size_t>(g.N * g.n), xi);
  g.x.resize(xi.size());
  for (std::size_t i = 0; i < xi.size(); ++i) g.x[i] = static_cast<float>(xi[i]) / 16.0f;  // exact
  read_section(in, "W", static_cast<std::size_t>(g.rows * g.n), g.w);
  in >> k >> g.hsum;
  EXPECT_EQ(k, "hsum");
  std::size_t n_cases = 0;
  in >> k >> n_cases;
  for (std::size_t c = 0; c < n_cases; ++c) {
    GoldenCase gc;
    int act = 0;
    in >> k >> gc.bits >> gc.group >> act >> gc.damp;
    gc.act_order = act != 0;
    const auto ng = static_cast<std::size_t>(g.rows * (g.n / gc.group));
    read_section(in, "codes", static_cast<std::size_t>(g.rows * g.n), gc.codes);
    read_section(in, "scales", ng, gc.scales);
    read_section(in, "zeros", ng, gc.zeros);
    g.cases.push_back(std::move(gc));
  }
  return g;
}

std::vector<double> hessian_of(const std::vector<float>& x, std::int64_t n, std::int64_t chunk) {
  HessianAccumulator acc(n);
  const std::int64_t m = static_cast<std::int64_t>(x.size()) / n;
  for (std::int64_t r0 = 0; r0 < m; r0 += chunk) acc.add(x.data() + r0 * n, std::min(chunk, m - r0), 2);
  EXPECT_EQ(acc.rows_seen(), m);
  return acc.hessian();
}

std::vector<float> dequant(const WqFormat& f, const std::vector<std::uint8_t>& q, std::int64_t rows, std::int64_t n) {
  std::vector<float> y(static_cast<std::size_t>(rows * n));
  const std::size_t rb = static_cast<std::size_t>(n / f.group) * f.block_bytes();
  for (std::int64_t r = 0; r < rows; ++r) wq_dequantize_row(f, q.data() + r * rb, y.data() + r * n, n);
  return y;
}

std::vector<std::uint8_t> run_gptq(const std::vector<double>& h, const std::vector<float>& w, std::int64_t rows,
                                   std::int64_t n, const WqFormat& f, GptqOptions o) {
  const GptqFactor fac = gptq_factor(h, n, o, "test");
  std::vector<std::uint8_t> q(static_cast<std::size_t>(rows * (n / f.group)) * f.block_bytes());
  gptq_quantize_rows(fac, f, w.data(), rows, q.data(), o);
  return q;
}

// A layer whose inputs are strongly correlated (each channel a step from its neighbour, every
// 37th scaled by 6) and whose weights are small with three planted outliers per row: 256 inputs,
// 32 rows, the Hessian of 512 activation rows.
struct PlantedOutlierLayer {
  std::int64_t n = 256, rows = 32;
  std::vector<float> w;
  std::vector<double> h;
};

PlantedOutlierLayer planted_outlier_layer(unsigned seed) {
  PlantedOutlierLayer l;
  const std::int64_t n = l.n, N = 512;
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(N * n));
  for (std::int64_t t = 0; t < N; ++t) {
    float common = nd(rng);
    for (std::int64_t j = 0; j < n; ++j) {
      common = 0.9f * common + 0.45f * nd(rng);  // neighbouring channels correlated
      x[static_cast<std::size_t>(t * n + j)] = common * (j % 37 == 0 ? 6.0f : 1.0f);
    }
  }
  l.w.resize(static_cast<std::size_t>(l.rows * n));
  std::normal_distribution<float> wd(0.0f, 0.02f);
  for (auto& v : l.w) v = wd(rng);
  for (std::int64_t r = 0; r < l.rows; ++r) {
    for (int i = 0; i < 3; ++i) l.w[static_cast<std::size_t>(r * n + rng() % n)] = (rng() % 2 ? 1 : -1) * 0.25f;
  }
  l.h = hessian_of(x, n, 128);
  return l;
}

TEST(Gptq, HessianInChunksEqualsOnePass) {
  const Golden g = load_golden();
  ASSERT_GT(g.n, 0);
  const auto one = hessian_of(g.x, g.n, g.N);
  // X holds multiples of 1/16 small enough that every partial sum is exact: any chunking must
  // give the same bits, and the numpy oracle's sum of H.
  for (std::int64_t chunk : {1, 7, 100}) {
    EXPECT_EQ(hessian_of(g.x, g.n, chunk), one) << "chunk " << chunk;
  }
  double sum = 0;
  for (double v : one) sum += v;
  EXPECT_NEAR(sum, g.hsum, 1e-12 * std::fabs(g.hsum));
  for (std::int64_t i = 0; i < g.n; ++i) {
    for (std::int64_t j = 0; j < g.n; ++j) ASSERT_EQ(one[i * g.n + j], one[j * g.n + i]);
  }
}

TEST(Gptq, CodesEqualTheNumpyOracle) {
  const Golden g = load_golden();
  ASSERT_EQ(g.cases.size(), 4u);
  const auto h = hessian_of(g.x, g.n, 64);
  for (const GoldenCase& c : g.cases) {
    for (int block : {128, 16, 5}) {  // the lazy blocks must not change a code
      SCOPED_TRACE("bits " + std::to_string(c.bits) + " group " + std::to_string(c.group) + " act_order " +
                   std::to_string(c.act_order) + " damp " + std::to_string(c.damp) + " block " + std::to_string(block));
      const WqFormat f{c.bits, c.group};
      GptqOptions o;
      o.damp = c.damp;
      o.act_order = c.act_order;
      o.block_size = block;
      o.n_threads = 2;
      const auto q = run_gptq(h, g.w, g.rows, g.n, f, o);
      const std::size_t ng = static_cast<std::size_t>(g.n / c.group);
      int code_diff = 0, param_diff = 0;
      for (std::int64_t r = 0; r < g.rows; ++r) {
        for (std::size_t b = 0; b < ng; ++b) {
          const std::uint8_t* blk = q.data() + (static_cast<std::size_t>(r) * ng + b) * f.block_bytes();
          std::uint8_t codes[128];
          wq_unpack_codes(blk + kWqHeaderBytes, f.bits, f.group, codes);
          for (int j = 0; j < f.group; ++j) {
            code_diff += codes[j] != c.codes[static_cast<std::size_t>(r * g.n + b * f.group + j)];
          }
          const int s16 = blk[0] | (blk[1] << 8);
          param_diff += s16 != c.scales[r * ng + b] || blk[2] != c.zeros[r * ng + b];
        }
      }
      EXPECT_EQ(code_diff, 0);
      EXPECT_EQ(param_diff, 0);
    }
  }
}

double output_error(const std::vector<double>& h, const std::vector<float>& w, const std::vector<float>& y,
                    std::int64_t rows, std::int64_t n) {
  return hessian_relative_error(h, w.data(), y.data(), rows, n);
}

TEST(Gptq, ErrorGrowsWithDampingTowardsRoundToNearest) {
  Golden g = load_golden();
  // GPTQ zeroes the dead channel's weights (no activation reaches them); so does the reference.
  for (std::int64_t r = 0; r < g.rows; ++r) g.w[static_cast<std::size_t>(r * g.n + 63)] = 0;
  const auto h = hessian_of(g.x, g.n, g.N);
  const WqFormat f{3, 32};
  // Round to nearest with the same min/max groups: what GPTQ becomes as damping swamps H.
  std::vector<std::uint8_t> rtn(static_cast<std::size_t>(g.rows * (g.n / f.group)) * f.block_bytes());
  const std::size_t rb = static_cast<std::size_t>(g.n / f.group) * f.block_bytes();
  for (std::int64_t r = 0; r < g.rows; ++r) wq_quantize_row(f, g.w.data() + r * g.n, rtn.data() + r * rb, g.n);
  const double e_rtn = output_error(h, g.w, dequant(f, rtn, g.rows, g.n), g.rows, g.n);
  double prev = 0;
  std::vector<double> errs;
  for (double damp : {0.001, 0.01, 0.1, 1.0, 10.0, 1000.0}) {
    GptqOptions o;
    o.damp = damp;
    const auto q = run_gptq(h, g.w, g.rows, g.n, f, o);
    const double e = output_error(h, g.w, dequant(f, q, g.rows, g.n), g.rows, g.n);
    errs.push_back(e);
    // Monotone within 5%: more damping means less of H's correlations used.
    EXPECT_GE(e, 0.95 * prev) << "damp " << damp;
    prev = e;
  }
  EXPECT_LT(errs[1], 0.8 * e_rtn) << "GPTQ at the default damping should clearly beat round to nearest";
  EXPECT_NEAR(errs.back(), e_rtn, 0.05 * e_rtn) << "huge damping is round to nearest";
}

TEST(Gptq, PlantedOutlierLayerBeatsRangeSearch) {
  // A layer whose inputs are strongly correlated and whose weights have planted outliers: the
  // range search can only trade clipping against step size per group; GPTQ also moves each
  // rounding error onto correlated columns. Measured as output error on the activations.
  const PlantedOutlierLayer layer = planted_outlier_layer(7);
  const std::int64_t n = layer.n, rows = layer.rows;
  const auto& w = layer.w;
  const auto& h = layer.h;
  std::vector<float> imp(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) imp[static_cast<std::size_t>(j)] = static_cast<float>(h[j * n + j]);
  for (int bits : {3, 4}) {
    SCOPED_TRACE(bits);
    const WqFormat f{bits, 64};
    const BlockTypeInfo& type = *find_block_type(wq_type_name(bits, 64));
    std::vector<std::uint8_t> rs(type.row_bytes(n) * rows);
    RowOptions ro;
    ro.range_search = true;
    ro.importance = imp;
    for (std::int64_t r = 0; r < rows; ++r) {
      quantize_row(type, w.data() + r * n, rs.data() + r * type.row_bytes(n), n, ro, nullptr);
    }
    const double e_rs = output_error(h, w, dequant(f, rs, rows, n), rows, n);
    for (bool act : {false, true}) {
      GptqOptions o;
      o.act_order = act;
      const double e_gptq = output_error(h, w, dequant(f, run_gptq(h, w, rows, n, f, o), rows, n), rows, n);
      EXPECT_LT(e_gptq, 0.8 * e_rs) << "act_order " << act << ": gptq " << e_gptq << " range search " << e_rs;
    }
  }
}

TEST(Gptq, OutliersAreKeptAndLowerTheError) {
  const Golden g = load_golden();
  const auto h = hessian_of(g.x, g.n, g.N);
  const WqFormat f{3, 32};
  GptqOptions o;
  const GptqFactor fac = gptq_factor(h, g.n, o, "test");
  const std::size_t rb = static_cast<std::size_t>(g.n / f.group) * f.block_bytes();
  std::vector<std::uint8_t> q(rb * g.rows);
  const std::int64_t k = 2;
  std::vector<std::uint32_t> idx(static_cast<std::size_t>(g.rows * k));
  std::vector<std::uint16_t> val(idx.size());
  gptq_quantize_rows(fac, f, g.w.data(), g.rows, q.data(), o, k, idx.data(), val.data());
  auto y = dequant(f, q, g.rows, g.n);
  for (std::int64_t r = 0; r < g.rows; ++r) {
    EXPECT_LT(idx[r * k], idx[r * k + 1]);  // ascending columns
    // The kept columns are the row's two largest |w|.
    std::vector<float> a(g.w.begin() + r * g.n, g.w.begin() + (r + 1) * g.n);
    for (auto& v : a) v = std::fabs(v);
    std::vector<float> sorted = a;
    std::sort(sorted.rbegin(), sorted.rend());
    for (std::int64_t t = 0; t < k; ++t) {
      EXPECT_GE(a[idx[r * k + t]], sorted[1]);
      y[static_cast<std::size_t>(r * g.n + idx[r * k + t])] += f16_to_f32(val[r * k + t]);
    }
  }
  const double with = output_error(h, g.w, y, g.rows, g.n);
  const double without =
      output_error(h, g.w, dequant(f, run_gptq(h, g.w, g.rows, g.n, f, o), g.rows, g.n), g.rows, g.n);
  EXPECT_LT(with, without);
}

// --gptq-refit: each row's group scales re-fitted to the codes GPTQ chose. The codes and
// zero-points stay, so each group's reconstruction is the plain one times one factor (its new
// scale over its old); the layer's output error is lower overall and in no row higher, with and
// without act order and with outliers kept apart.
TEST(Gptq, ScaleRefitKeepsTheCodesAndLowersTheOutputError) {
  const PlantedOutlierLayer layer = planted_outlier_layer(11);
  const std::int64_t n = layer.n, rows = layer.rows;
  for (int bits : {2, 3}) {
    for (bool act : {false, true}) {
      for (std::int64_t k : {0, 2}) {
        SCOPED_TRACE(testing::Message() << "bits " << bits << " act_order " << act << " outliers " << k);
        const WqFormat f{bits, 64};
        const auto quantize = [&](bool refit) {
          GptqOptions o;
          o.act_order = act;
          o.range_search = true;
          o.refit_scales = refit;
          const GptqFactor fac = gptq_factor(layer.h, n, o, "test");
          std::vector<std::uint8_t> q(static_cast<std::size_t>(rows * (n / f.group)) * f.block_bytes());
          std::vector<std::uint32_t> idx(static_cast<std::size_t>(rows * k));
          std::vector<std::uint16_t> val(idx.size());
          gptq_quantize_rows(fac, f, layer.w.data(), rows, q.data(), o, k, idx.data(), val.data());
          std::vector<float> dense = dequant(f, q, rows, n), full = dense;
          for (std::int64_t r = 0; r < rows; ++r) {
            for (std::int64_t t = 0; t < k; ++t) {
              full[static_cast<std::size_t>(r * n + idx[r * k + t])] += f16_to_f32(val[r * k + t]);
            }
          }
          return std::pair{dense, full};
        };
        const auto [dense0, full0] = quantize(false);
        const auto [dense1, full1] = quantize(true);
        int changed = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
          for (std::int64_t g = 0; g < n / f.group; ++g) {
            // One factor per group: the largest |value| decides it, every other value follows.
            std::int64_t jm = g * f.group;
            for (std::int64_t j = g * f.group; j < (g + 1) * f.group; ++j) {
              if (std::fabs(dense0[r * n + j]) > std::fabs(dense0[r * n + jm])) jm = j;
            }
            if (dense0[r * n + jm] == 0.0f) continue;
            const double c = static_cast<double>(dense1[r * n + jm]) / dense0[r * n + jm];
            changed += c != 1.0;
            for (std::int64_t j = g * f.group; j < (g + 1) * f.group; ++j) {
              ASSERT_NEAR(dense1[r * n + j], c * dense0[r * n + j], 1e-6 * std::fabs(dense0[r * n + jm]))
                  << "row " << r << " column " << j;
            }
          }
          const std::vector<float> w_r(layer.w.begin() + r * n, layer.w.begin() + (r + 1) * n);
          const std::vector<float> y0(full0.begin() + r * n, full0.begin() + (r + 1) * n);
          const std::vector<float> y1(full1.begin() + r * n, full1.begin() + (r + 1) * n);
          EXPECT_LE(output_error(layer.h, w_r, y1, 1, n), output_error(layer.h, w_r, y0, 1, n) * (1 + 1e-9))
              << "row " << r;
        }
        EXPECT_GT(changed, 0);
        const double e0 = output_error(layer.h, layer.w, full0, rows, n);
        const double e1 = output_error(layer.h, layer.w, full1, rows, n);
        EXPECT_LT(e1, (bits == 2 ? 0.95 : 0.99) * e0) << "refit " << e1 << " plain " << e0;
      }
    }
  }
}

TEST(Gptq, BadInputIsAClearError) {
  GptqOptions o;
  std::vector<double> h(16, 0.0);
  EXPECT_THROW(gptq_factor(h, 5, o, "t"), Error);  // size mismatch
  h[0] = -1;                                       // not positive definite once damped
  h[5] = h[10] = h[15] = 1;
  o.damp = 0;
  try {
    gptq_factor(h, 4, o, "blk.0.attn_q.weight");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blk.0.attn_q.weight"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--gptq-damp"), std::string::npos) << e.what();
  }
  const GptqFactor fac = gptq_factor(std::vector<double>{1, 0, 0, 1}, 2, o, "t");
  std::vector<float> w(2);
  std::vector<std::uint8_t> q(64);
  EXPECT_THROW(gptq_quantize_rows(fac, WqFormat{4, 32}, w.data(), 1, q.data(), o), Error);  // 2 is not whole groups
}

}  // namespace
}  // namespace wisp::quantize
