// KV element types: bytes per value including group scales, and whole-group padding per head.
#include <gtest/gtest.h>

#include "plan/kv_bytes.h"
#include "plan/kv_types.h"
#include "plan/paged.h"
#include "wisp/error.h"

namespace wisp::plan {
namespace {

TEST(KvTypes, BytesPerValueIncludeScales) {
  EXPECT_EQ(kv_type_by_name("f16").bytes_per_element(), 2.0);
  EXPECT_EQ(kv_type_by_name("f32").bytes_per_element(), 4.0);
  EXPECT_EQ(kv_type_by_name("q8_0").bytes_per_element(), 34.0 / 32);  // 1.0625
  EXPECT_EQ(kv_type_by_name("q4").bytes_per_element(), 0.625);        // 16 + 2 + 2 per 32
  EXPECT_EQ(kv_type_by_name("Q8_0").name, "q8_0");                    // case-insensitive
}

TEST(KvTypes, UnknownTypeListsTheKnownOnes) {
  try {
    kv_type_by_name("q3");
    FAIL();
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("unknown KV type 'q3'"), std::string::npos) << m;
    EXPECT_NE(m.find("f16, f32, q8_0, q4"), std::string::npos) << m;
  }
}

TEST(KvTypes, QuantizedBytesPerTokenFor70BGqa) {
  const KvGeometry g{80, 8, 128};  // 128 values per head = 4 groups of 32
  EXPECT_EQ(kv_bytes_per_token(g, kv_type_by_name("f16")), 327680u);
  EXPECT_EQ(kv_bytes_per_token(g, kv_type_by_name("q8_0")), 2u * 80 * 8 * 4 * 34);  // 174,080
  EXPECT_EQ(kv_bytes_per_token(g, kv_type_by_name("q4")), 2u * 80 * 8 * 4 * 20);    // 102,400
  EXPECT_EQ(kv_bytes_per_token(g, kv_type_by_name("q4")), 327680u * 5 / 16);        // 0.625 / 2
}

TEST(KvTypes, GroupsNeverStraddleHeads) {
  // head_dim 80 (not a multiple of 32): each head vector pads to 3 groups = 96 slots.
  const KvGeometry g{1, 2, 80};
  EXPECT_EQ(kv_bytes_per_token(g, kv_type_by_name("q8_0")), 2u * 2 * 3 * 34);
  EXPECT_EQ(kv_bytes_per_token(g, kv_type_by_name("f16")), 2u * 2 * 80 * 2);
  EXPECT_EQ(kv_type_by_name("q4").bytes_for(0), 0u);
  EXPECT_EQ(kv_type_by_name("q4").bytes_for(1), 20u);
  EXPECT_EQ(kv_type_by_name("q4").bytes_for(32), 20u);
  EXPECT_EQ(kv_type_by_name("q4").bytes_for(33), 40u);
}

TEST(KvBytes, ZeroSizesAreErrorsNamingTheField) {
  const KvElementType& t = kv_type_by_name("f16");
  try {
    kv_bytes_per_token(KvGeometry{0, 8, 128}, t);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer"), std::string::npos) << e.what();
  }
  EXPECT_THROW(kv_bytes_per_token(KvGeometry{80, 0, 128}, t), Error);
  EXPECT_THROW(kv_bytes_per_token(KvGeometry{80, 8, 0}, t), Error);
  EXPECT_THROW(kv_plain_type(0), Error);
}

TEST(KvBytes, OverflowIsAnErrorNotAWrap) {
  const KvGeometry g{1ull << 40, 1ull << 20, 1ull << 10};
  EXPECT_THROW(kv_bytes_per_token(g, kv_type_by_name("f16")), Error);
  EXPECT_THROW(kv_bytes(KvGeometry{80, 8, 128}, kv_type_by_name("f16"), 1ull << 60), Error);
}

TEST(Paged, BlocksRoundUpAndEmptySequencesHoldNone) {
  EXPECT_EQ(blocks_for(0, 16), 0u);
  EXPECT_EQ(blocks_for(1, 16), 1u);
  EXPECT_EQ(blocks_for(16, 16), 1u);
  EXPECT_EQ(blocks_for(17, 16), 2u);
  EXPECT_EQ(blocks_for(4096, 16), 256u);
  EXPECT_THROW(blocks_for(5, 0), Error);
  // The tail waste is at most block_size − 1 for every length.
  for (std::uint64_t n = 1; n <= 64; ++n) {
    const PagedAllocation a = paged_allocation(n, 16, 10);
    EXPECT_LE(a.waste_tokens, 15u);
    EXPECT_EQ(a.bytes, a.blocks * 16 * 10);
  }
  EXPECT_THROW(naive_reservation(2049, 2048, 10), Error);
}

}  // namespace
}  // namespace wisp::plan
