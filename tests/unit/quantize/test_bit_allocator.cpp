// --target-bpw's allocation (quantize/bit_allocator.h, quantize/target_bpw.h): the chosen set
// meets the byte budget, equals a brute-force optimum on small cases, never gets worse as the
// budget grows, and on real-shaped tensors spends bits where the measured error falls most.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "formats/wq_format.h"
#include "quantize/bit_allocator.h"
#include "quantize/target_bpw.h"
#include "wisp/error.h"

namespace wisp::quantize {
namespace {

// Random items shaped like the real problem: more bytes, less error (with some candidates that
// are dominated, i.e. more bytes and *more* error, which the optimum must skip).
std::vector<BitItem> random_items(int n_items, int n_cand, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> bytes(10, 200);
  std::uniform_real_distribution<double> err(0.0, 1.0);
  std::vector<BitItem> items(static_cast<std::size_t>(n_items));
  for (int i = 0; i < n_items; ++i) {
    items[static_cast<std::size_t>(i)].name = "t" + std::to_string(i);
    for (int k = 0; k < n_cand; ++k) {
      items[static_cast<std::size_t>(i)].candidates.push_back(
          {nullptr, static_cast<std::uint64_t>(bytes(rng)), err(rng)});
    }
  }
  return items;
}

// Least summed error over every combination with bytes <= budget (infinity when none fits).
double brute_force(const std::vector<BitItem>& items, std::uint64_t budget) {
  double best = std::numeric_limits<double>::infinity();
  std::vector<std::size_t> idx(items.size(), 0);
  while (true) {
    std::uint64_t b = 0;
    double e = 0;
    for (std::size_t i = 0; i < items.size(); ++i)
      b += items[i].candidates[idx[i]].bytes, e += items[i].candidates[idx[i]].error;
    if (b <= budget) best = std::min(best, e);
    std::size_t i = 0;
    while (i < items.size() && ++idx[i] == items[i].candidates.size()) idx[i++] = 0;
    if (i == items.size()) return best;
  }
}

TEST(BitAllocator, OptimalOnBruteForceableCases) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto items = random_items(5, 4, seed);  // 4^5 = 1024 combinations
    std::uint64_t lo = 0, hi = 0;
    for (const auto& it : items) {
      std::uint64_t mn = ~0ull, mx = 0;
      for (const auto& c : it.candidates) mn = std::min(mn, c.bytes), mx = std::max(mx, c.bytes);
      lo += mn, hi += mx;
    }
    for (std::uint64_t budget = lo; budget <= hi; budget += (hi - lo) / 7 + 1) {
      const BitAllocation a = allocate_bits(items, budget, 1);
      EXPECT_LE(a.bytes, budget);
      EXPECT_NEAR(a.error, brute_force(items, budget), 1e-12) << "seed " << seed << " budget " << budget;
      // The reported totals are those of the reported choice.
      std::uint64_t b = 0;
      double e = 0;
      for (std::size_t i = 0; i < items.size(); ++i)
        b += items[i].candidates[a.choice[i]].bytes, e += items[i].candidates[a.choice[i]].error;
      EXPECT_EQ(b, a.bytes);
      EXPECT_NEAR(e, a.error, 1e-12);
    }
  }
}

TEST(BitAllocator, CoarseUnitsStillMeetTheBudgetAndAreMonotone) {
  // 300 items of 10-200 bytes with a unit of 16 bytes: rounding must never overshoot, and a
  // larger budget never gives a larger error.
  const auto items = random_items(300, 12, 7);
  double prev = std::numeric_limits<double>::infinity();
  std::uint64_t lo = 0;
  for (const auto& it : items) {
    std::uint64_t mn = ~0ull;
    for (const auto& c : it.candidates) mn = std::min(mn, c.bytes);
    lo += mn;
  }
  for (std::uint64_t budget = lo; budget < lo + 60000; budget += 997) {
    const BitAllocation a = allocate_bits(items, budget, 16);
    EXPECT_LE(a.bytes, budget);
    EXPECT_LE(a.error, prev + 1e-12) << "budget " << budget;
    prev = a.error;
  }
}

TEST(BitAllocator, InfeasibleBudgetNamesTheSmallestSize) {
  std::vector<BitItem> items = {{"a", {{nullptr, 100, 1.0}, {nullptr, 200, 0.5}}}, {"b", {{nullptr, 50, 1.0}}}};
  try {
    allocate_bits(items, 149);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("150"), std::string::npos) << e.what();
  }
  EXPECT_EQ(allocate_bits(items, 150).bytes, 150u);
  EXPECT_EQ(allocate_bits(items, 250).bytes, 250u);
}

// A 2-D tensor whose rows are N(0, sigma) with `outliers` large values per row, read as a source.
SourceTensor synthetic(const std::string& name, std::int64_t cols, std::int64_t rows, float sigma, int outliers,
                       unsigned seed) {
  auto data = std::make_shared<std::vector<float>>(static_cast<std::size_t>(cols * rows));
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, sigma);
  for (auto& v : *data) v = nd(rng);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (int k = 0; k < outliers; ++k)
      (*data)[static_cast<std::size_t>(r * cols + static_cast<std::int64_t>(rng() % cols))] = 12 * sigma;
  }
  SourceTensor t;
  t.name = name;
  t.ne = {cols, rows};
  t.stored_type = "F32";
  t.read_row = [data, cols](std::int64_t r, float* out) { std::copy_n(data->data() + r * cols, cols, out); };
  return t;
}

std::vector<SourceTensor> model_like() {
  std::vector<SourceTensor> ts;
  ts.push_back(synthetic("token_embd.weight", 256, 64, 0.02f, 0, 1));
  ts.push_back(synthetic("blk.0.attn_q.weight", 256, 64, 0.02f, 0, 2));
  ts.push_back(synthetic("blk.0.ffn_down.weight", 256, 128, 0.02f, 6, 3));  // outliers: hard to quantize
  SourceTensor norm = synthetic("blk.0.attn_norm.weight", 256, 1, 1.0f, 0, 4);
  norm.ne = {256};
  ts.push_back(norm);
  return ts;
}

double bpw_of(const TargetBpwPlan& p) { return p.bits_per_weight(); }

TEST(TargetBpw, MeetsTheBudgetAndImprovesWithIt) {
  const auto ts = model_like();
  TypePolicy policy;
  policy.base = find_block_type("WQ4_G64");
  double prev_err = std::numeric_limits<double>::infinity();
  for (double x : {3.5, 4.0, 4.5, 6.0, 9.0}) {
    TargetBpwOptions o;
    o.target_bpw = x;
    const TargetBpwPlan p = plan_target_bpw(ts, policy, o);
    EXPECT_LE(bpw_of(p), x) << x;
    EXPECT_GT(bpw_of(p), x - 0.75) << x << ": the budget is left mostly unused";
    // Bytes count every tensor, the F32 norm included.
    std::uint64_t bytes = 0;
    double err = 0;
    for (const auto& t : ts) {
      const TensorChoice& c = p.choices.at(t.name);
      bytes += c.type->row_bytes(t.ne[0]) * static_cast<std::uint64_t>(t.n_rows());
      err += c.error;
    }
    EXPECT_EQ(bytes, p.bytes);
    EXPECT_EQ(p.choices.at("blk.0.attn_norm.weight").type->name, std::string("F32"));
    EXPECT_EQ(p.choices.at("blk.0.attn_norm.weight").reason, "1-D");
    // Protected embedding: at least 6 bits.
    EXPECT_GE(p.choices.at("token_embd.weight").type->bits_per_weight(), 6.0) << x;
    EXPECT_LE(err, prev_err + 1e-12) << x;
    prev_err = err;
  }
}

TEST(TargetBpw, ErrorsAreMeasuredAndOrdered) {
  // More bits, less error; the same bits with a smaller group, less error.
  const auto ts = model_like();
  TypePolicy policy;
  policy.base = find_block_type("WQ4_G64");
  TargetBpwOptions o;
  const auto items = target_bpw_candidates(ts, policy, o);
  auto err = [&](const char* tensor, const char* type) {
    for (const auto& it : items) {
      if (it.name != tensor) continue;
      for (const auto& c : it.candidates) {
        if (std::string(c.type->name) == type) return c.error;
      }
    }
    ADD_FAILURE() << tensor << " has no candidate " << type;
    return 0.0;
  };
  EXPECT_LT(err("blk.0.attn_q.weight", "WQ3_G64"), err("blk.0.attn_q.weight", "WQ2_G64"));
  EXPECT_LT(err("blk.0.attn_q.weight", "WQ4_G64"), err("blk.0.attn_q.weight", "WQ3_G64"));
  EXPECT_LT(err("blk.0.attn_q.weight", "WQ4_G32"), err("blk.0.attn_q.weight", "WQ4_G128"));
  // 4 bits of N(0, s) at group 64: relative squared error about 1% (s/2 bound on ~2.5-sigma ranges).
  EXPECT_GT(err("blk.0.attn_q.weight", "WQ4_G64"), 0.002);
  EXPECT_LT(err("blk.0.attn_q.weight", "WQ4_G64"), 0.05);
  // The outlier-laden tensor is harder at the same type.
  EXPECT_GT(err("blk.0.ffn_down.weight", "WQ4_G64"), err("blk.0.attn_q.weight", "WQ4_G64"));
  // Protected tensors offer only >= 6-bit types; 2-D others only WQ types.
  for (const auto& it : items) {
    for (const auto& c : it.candidates) {
      if (it.name == "token_embd.weight") EXPECT_GE(c.type->bits_per_weight(), 6.0) << c.type->name;
      if (it.name == "blk.0.attn_q.weight") EXPECT_NE(wq_format(c.type->id).bits, 0) << c.type->name;
    }
  }
}

TEST(TargetBpw, OverrideWinsAndTooSmallTargetsAreErrors) {
  const auto ts = model_like();
  TypePolicy policy;
  policy.base = find_block_type("WQ4_G64");
  policy.rules.push_back(parse_type_rule("ffn_down=q8_0"));
  TargetBpwOptions o;
  o.target_bpw = 7.0;
  const TargetBpwPlan p = plan_target_bpw(ts, policy, o);
  EXPECT_EQ(p.choices.at("blk.0.ffn_down.weight").type->name, std::string("Q8_0"));
  EXPECT_EQ(p.choices.at("blk.0.ffn_down.weight").reason, "override");
  EXPECT_LE(p.bits_per_weight(), 7.0);
  o.target_bpw = 5.0;  // ffn_down (half the weights) at 8.5 bits makes this impossible
  try {
    plan_target_bpw(ts, policy, o);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("smallest"), std::string::npos) << e.what();
  }
  for (double bad : {1.0, 0.5, -3.0, std::nan("")}) {
    o.target_bpw = bad;
    EXPECT_THROW(plan_target_bpw(ts, policy, o), Error) << bad;
  }
}

}  // namespace
}  // namespace wisp::quantize
