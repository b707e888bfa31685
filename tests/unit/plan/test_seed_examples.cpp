// The seeds' worked examples (shared/seeds/) as test vectors, one test per item of issue 6's
// "Done means": each reproduces the seed's own numbers exactly, through the same functions
// `wisp plan` prints.
#include <gtest/gtest.h>

#include <cmath>

#include "plan/capacity.h"
#include "plan/decode.h"
#include "plan/kv_bytes.h"
#include "plan/kv_types.h"
#include "plan/ladder.h"
#include "plan/paged.h"
#include "plan/prefill.h"
#include "plan/units.h"
#include "plan/weights.h"

namespace wisp::plan {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;
constexpr double kMiB = 1024.0 * 1024;
constexpr std::uint64_t kGiBu = 1024ull * 1024 * 1024;

const KvElementType& f16() { return kv_type_by_name("f16"); }

// Llama-2-13B as seed 000 gives it: 40 layers, d_model 5120, multi-head attention.
constexpr KvGeometry k13B{40, 1, 5120};

// [C1] 6 layers, d_model 512, FP16, one request of 128 tokens: 1,572,864 bytes = 1.5 MiB;
// INT8 (p = 1) halves it to 0.75 MiB.
TEST(Seed000, C1SmallModelKvInMiB) {
  const KvGeometry g{6, 1, 512};
  const std::uint64_t fp16 = kv_bytes(g, f16(), 128, 1);
  EXPECT_EQ(fp16, 1572864u);
  EXPECT_EQ(fp16 / kMiB, 1.5);
  EXPECT_EQ(format_bytes(static_cast<double>(fp16)), "1.5 MiB");
  const std::uint64_t int8 = kv_bytes(g, kv_plain_type(1), 128, 1);
  EXPECT_EQ(int8, 786432u);
  EXPECT_EQ(int8 / kMiB, 0.75);
}

// [C2] 13B at S = 4096: 3,355,443,200 bytes = 3.125 GiB per request (3.355 GB decimal);
// a 40 GiB KV pool holds ⌊12.8⌋ = 12 with 2.5 GiB idle; a 13th would need 40.625 GiB.
TEST(Seed000, C2BatchScalingUntilOom) {
  const std::uint64_t per_request = kv_bytes(k13B, f16(), 4096);
  EXPECT_EQ(per_request, 3355443200u);
  EXPECT_EQ(per_request / kGiB, 3.125);
  EXPECT_EQ(format_bytes(static_cast<double>(per_request), UnitSystem::kDecimal), "3.355 GB");
  const BatchFit fit = fit_batch(40 * kGiBu, per_request);
  EXPECT_EQ(fit.users, 12u);
  EXPECT_EQ(fit.used / kGiB, 37.5);
  EXPECT_EQ(fit.leftover / kGiB, 2.5);
  EXPECT_LT(fit.leftover, per_request);     // not enough for a 13th
  EXPECT_GT(13 * per_request, 40 * kGiBu);  // 40.625 GiB > 40 GiB
  // B is a clean linear multiplier.
  EXPECT_EQ(kv_bytes(k13B, f16(), 4096, 12), 12 * per_request);
}

// [C3] S = 1: 819,200 bytes; paging reserves one 16-token block = 13,107,200 bytes, of which
// 15/16 = 93.75% (12,288,000 bytes) is waste; the parts add to the whole.
TEST(Seed000, C3OneTokenSequenceAndTailBlock) {
  const std::uint64_t per_token = kv_bytes_per_token(k13B, f16());
  EXPECT_EQ(per_token, 819200u);
  EXPECT_EQ(kv_bytes(k13B, f16(), 1), 819200u);
  const PagedAllocation a = paged_allocation(1, 16, per_token);
  EXPECT_EQ(a.blocks, 1u);
  EXPECT_EQ(a.bytes, 13107200u);
  EXPECT_EQ(a.bytes / kMiB, 12.5);
  EXPECT_EQ(a.waste_tokens, 15u);
  EXPECT_EQ(a.waste_bytes, 12288000u);
  EXPECT_DOUBLE_EQ(a.tail_waste_fraction(), 0.9375);
  EXPECT_EQ(a.used_bytes + a.waste_bytes, a.bytes);
}

// [C4] max_len 2048, block 16, 100 tokens used: paged 7 blocks = 112 slots, 12 wasted, against
// 1948 wasted naively: about 162x less.
TEST(Seed000, C4PagedVersusNaiveWaste) {
  const std::uint64_t per_token = kv_bytes_per_token(k13B, f16());
  const PagedAllocation p = paged_allocation(100, 16, per_token);
  EXPECT_EQ(p.blocks, 7u);
  EXPECT_EQ(p.slots, 112u);
  EXPECT_EQ(p.waste_tokens, 12u);
  EXPECT_LE(p.waste_tokens, 16u - 1);
  const NaiveReservation n = naive_reservation(100, 2048, per_token);
  EXPECT_EQ(n.waste_tokens, 1948u);
  const double ratio = static_cast<double>(n.waste_tokens) / static_cast<double>(p.waste_tokens);
  EXPECT_EQ(std::lround(ratio), 162);
  EXPECT_EQ(n.waste_bytes / p.waste_bytes, 162u);  // the same ratio in bytes
}

// [C9] 80 GiB card, 4 GiB overhead, 3.125 GiB per user: FP16 weights (26 GiB) leave 50 GiB for
// 16 users (exactly full); INT4 weights (6.5 GiB) leave 69.5 GiB for 22 — 6 more.
TEST(Seed000, C9HowManyUsersFit) {
  const std::uint64_t per_user = kv_bytes(k13B, f16(), 4096);
  const std::uint64_t budget = 80 * kGiBu, overhead = 4 * kGiBu;
  const std::uint64_t fp16_weights = 26 * kGiBu;
  const std::uint64_t int4_weights = static_cast<std::uint64_t>(6.5 * kGiB);

  const BatchFit fp16 = fit_batch(kv_room(budget, overhead, fp16_weights), per_user);
  EXPECT_EQ(fp16.kv_room / kGiB, 50.0);
  EXPECT_EQ(fp16.users, 16u);
  EXPECT_EQ(fp16.leftover, 0u);  // 16 × 3.125 = 50.0: exactly full

  const BatchFit int4 = fit_batch(kv_room(budget, overhead, int4_weights), per_user);
  EXPECT_EQ(int4.kv_room / kGiB, 69.5);
  EXPECT_EQ(int4.users, 22u);
  EXPECT_EQ(int4.used / kGiB, 68.75);
  EXPECT_EQ(int4.leftover / kGiB, 0.75);
  EXPECT_EQ(int4.users - fp16.users, 6u);

  // From the parameter count instead of the seed's rounded weight sizes: 13e9 × 2 bytes is
  // 24.2 GiB, 13e9 × 0.5 bytes 6.05 GiB; the user counts are the same.
  EXPECT_EQ(fit_batch(kv_room(budget, overhead, weight_bytes_at_bits(13e9, 16)), per_user).users, 16u);
  EXPECT_EQ(fit_batch(kv_room(budget, overhead, weight_bytes_at_bits(13e9, 4)), per_user).users, 22u);
}

// Seed 001: a 70B model with grouped-query attention, 80 layers, 8 KV heads of 128, 2 bytes:
// 327,680 bytes per token, so an 8,000-token conversation takes 2.6 GB and ten need 26 GB on top
// of 35 GB of 4-bit weights.
TEST(Seed001, GqaServingBudget) {
  const KvGeometry g{80, 8, 128};
  EXPECT_EQ(kv_bytes_per_token(g, f16()), 327680u);
  EXPECT_EQ(kv_bytes_per_token(80, 8, 128, f16()), 327680u);
  const std::uint64_t conversation = kv_bytes(g, f16(), 8000);
  EXPECT_EQ(conversation, 2621440000u);
  EXPECT_EQ(std::round(conversation / 1e8) / 10, 2.6);  // ≈ 2.6 GB (decimal, as the seed)
  EXPECT_EQ(format_bytes(static_cast<double>(conversation), UnitSystem::kDecimal), "2.621 GB");
  const std::uint64_t ten = kv_bytes(g, f16(), 8000, 10);
  EXPECT_EQ(std::round(ten / 1e9), 26.0);
  EXPECT_EQ(weight_bytes_at_bits(70e9, 4), 35000000000u);
}

// Seed 001: 35 GB of weights read at 1,000 GB/s takes 35 ms a step: one user gets about 29
// tokens/s, eight users sharing the read about 229 tokens/s in total (cache reads ignored).
TEST(Seed001, BatchingSharesTheWeightRead) {
  const DecodeCeiling one = decode_ceiling(1000e9, 35000000000u, 0, 1);
  EXPECT_DOUBLE_EQ(one.step_seconds, 0.035);
  EXPECT_EQ(std::lround(one.per_stream_tokens_per_second), 29);
  const DecodeCeiling eight = decode_ceiling(1000e9, 35000000000u, 0, 8);
  EXPECT_DOUBLE_EQ(eight.step_seconds, 0.035);
  EXPECT_EQ(std::lround(eight.aggregate_tokens_per_second), 229);
  EXPECT_EQ(std::lround(eight.per_stream_tokens_per_second), 29);
  // What the seed leaves out: each stream's own KV reads slow every stream down.
  const std::uint64_t kv = kv_bytes(KvGeometry{80, 8, 128}, f16(), 8000);
  const DecodeCeiling with_kv = decode_ceiling(1000e9, 35000000000u, kv, 8);
  EXPECT_DOUBLE_EQ(with_kv.step_bytes, 35e9 + 8.0 * 2621440000.0);
  EXPECT_LT(with_kv.aggregate_tokens_per_second, eight.aggregate_tokens_per_second);
}

// Seed 004: 70B on a 160 GB node at 3.35 TB/s. fp16 140 GB (20 GB left, ≈23.9 tok/s), 8-bit 70 GB
// (90 GB left, ≈47.9 tok/s), 4-bit 35 GB (125 GB left): each step halves the weights and doubles
// the ceiling.
TEST(Seed004, PrecisionLadder) {
  LadderInputs in;
  in.params = 70e9;
  in.budget = 160000000000u;
  in.kv_bytes_per_request = kv_bytes(KvGeometry{80, 8, 128}, f16(), 8000);
  in.bandwidth = 3.35e12;
  const std::vector<LadderRow> rows = precision_ladder(in);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].bits, 16.0);
  EXPECT_EQ(rows[0].weight_bytes, 140000000000u);
  EXPECT_EQ(rows[1].weight_bytes, 70000000000u);
  EXPECT_EQ(rows[2].weight_bytes, 35000000000u);
  EXPECT_EQ(rows[0].fit->kv_room, 20000000000u);
  EXPECT_EQ(rows[1].fit->kv_room, 90000000000u);
  EXPECT_EQ(rows[2].fit->kv_room, 125000000000u);
  EXPECT_EQ(format_number(rows[0].weights_only->per_stream_tokens_per_second, 3), "23.9");
  EXPECT_EQ(format_number(rows[1].weights_only->per_stream_tokens_per_second, 3), "47.9");
  EXPECT_DOUBLE_EQ(rows[1].weights_only->per_stream_tokens_per_second,
                   2 * rows[0].weights_only->per_stream_tokens_per_second);
  EXPECT_DOUBLE_EQ(rows[2].weights_only->per_stream_tokens_per_second,
                   2 * rows[1].weights_only->per_stream_tokens_per_second);
  // Users at 8,000 tokens each (2.62144 GB): ⌊20/2.62⌋ = 7, ⌊90/2.62⌋ = 34, ⌊125/2.62⌋ = 47.
  EXPECT_EQ(rows[0].fit->users, 7u);
  EXPECT_EQ(rows[1].fit->users, 34u);
  EXPECT_EQ(rows[2].fit->users, 47u);
}

// Seed 004's startup stack: an 8B model at 4-bit is 4 GB; a 1008 GB/s card re-reading it decodes
// 252 tokens/s per stream; an 8B-class model (32 layers, 8 KV heads of 128) pays 128 KB (KiB) of
// KV per token at bf16/f16.
TEST(Seed004, EightBillionOnOneCard) {
  EXPECT_EQ(weight_bytes_at_bits(8e9, 16), 16000000000u);
  EXPECT_EQ(weight_bytes_at_bits(8e9, 4), 4000000000u);
  EXPECT_DOUBLE_EQ(decode_ceiling(1008e9, 4000000000u, 0, 1).per_stream_tokens_per_second, 252.0);
  EXPECT_EQ(kv_bytes_per_token(KvGeometry{32, 8, 128}, f16()), 128u * 1024);
}

// Seed 004: prefill costs about 2 FLOPs per parameter per prompt token.
TEST(Seed004, PrefillTwoFlopsPerParameterPerToken) {
  const PrefillCost p = prefill_cost(13e9, 4096, 100e12);
  EXPECT_DOUBLE_EQ(p.flops, 2 * 13e9 * 4096);
  EXPECT_DOUBLE_EQ(p.seconds, 2 * 13e9 * 4096 / 100e12);
  EXPECT_DOUBLE_EQ(p.tokens_per_second, 4096 / p.seconds);
  const PrefillCost unknown_rate = prefill_cost(13e9, 4096, 0);
  EXPECT_DOUBLE_EQ(unknown_rate.flops, p.flops);
  EXPECT_EQ(unknown_rate.seconds, 0.0);
}

}  // namespace
}  // namespace wisp::plan
