// Budgets: a budget smaller than the weights is an error that states the sizes.
#include <gtest/gtest.h>

#include "plan/capacity.h"
#include "plan/decode.h"
#include "plan/ladder.h"
#include "plan/prefill.h"
#include "plan/weights.h"
#include "wisp/error.h"

namespace wisp::plan {
namespace {

constexpr std::uint64_t kGiB = 1024ull * 1024 * 1024;

TEST(Capacity, BudgetSmallerThanWeightsIsAClearError) {
  try {
    kv_room(10 * kGiB, 4 * kGiB, 26 * kGiB);
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("memory budget 10 GiB is smaller than the weights (26 GiB) plus overhead "
                     "(4 GiB): short by 20 GiB"),
              std::string::npos)
        << m;
  }
  EXPECT_FALSE(kv_room_if_fits(10 * kGiB, 4 * kGiB, 26 * kGiB).has_value());
  EXPECT_FALSE(kv_room_if_fits(10 * kGiB, 11 * kGiB, 0).has_value());  // overhead alone
  EXPECT_THROW(kv_room(0, 0, 1), Error);
  EXPECT_EQ(kv_room(30 * kGiB, 4 * kGiB, 26 * kGiB), 0u);  // exactly full: no KV, no error
  EXPECT_EQ(fit_batch(0, 100).users, 0u);
  EXPECT_THROW(fit_batch(100, 0), Error);
}

TEST(Weights, BitsToBytes) {
  EXPECT_EQ(weight_bytes_at_bits(13e9, 16), 26000000000u);
  EXPECT_EQ(weight_bytes_at_bits(13e9, 4.5), 7312500000u);  // Q4_K's 4.5 bits per weight
  EXPECT_THROW(weight_bytes_at_bits(0, 16), Error);
  EXPECT_THROW(weight_bytes_at_bits(-1, 16), Error);
  EXPECT_THROW(weight_bytes_at_bits(13e9, 0), Error);
  EXPECT_THROW(weight_bytes_at_bits(13e9, -4), Error);
}

TEST(Decode, RejectsNonsense) {
  EXPECT_THROW(decode_ceiling(0, 100, 0, 1), Error);
  EXPECT_THROW(decode_ceiling(-1e9, 100, 0, 1), Error);
  EXPECT_THROW(decode_ceiling(1e9, 100, 0, 0), Error);
  EXPECT_THROW(decode_ceiling(1e9, 0, 0, 1), Error);
  EXPECT_THROW(prefill_cost(0, 10, 1e12), Error);
  EXPECT_THROW(prefill_cost(1e9, 0, 1e12), Error);
  EXPECT_THROW(prefill_cost(1e9, 10, -1), Error);
}

TEST(Ladder, RowsThatDoNotFitReportTheShortfall) {
  LadderInputs in;
  in.params = 70e9;
  in.budget = 80 * kGiB;
  in.kv_bytes_per_request = kGiB;
  const std::vector<LadderRow> rows = precision_ladder(in);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_FALSE(rows[0].fit.has_value());  // 140 GB of weights in 80 GiB
  EXPECT_EQ(*rows[0].shortfall, 140000000000u - 80 * kGiB);
  EXPECT_TRUE(rows[1].fit.has_value());            // 70 GB fits
  EXPECT_FALSE(rows[0].weights_only.has_value());  // no bandwidth given
}

}  // namespace
}  // namespace wisp::plan
