// The planner's KV bytes against the runtime pool's own accounting (src/kv): for the types the
// pool can hold, `wisp plan`'s per-token bytes equal KvLayout's, and the paged bytes a sequence of
// S tokens holds equal what the pool reports after appending S tokens.
#include <gtest/gtest.h>

#include "kv/kv_layout.h"
#include "kv/kv_pool.h"
#include "plan/kv_bytes.h"
#include "plan/kv_types.h"
#include "plan/paged.h"

namespace wisp::plan {
namespace {

TEST(RuntimeAgreement, BytesPerTokenMatchKvLayout) {
  for (const KvGeometry g : {KvGeometry{80, 8, 128}, KvGeometry{30, 3, 64}, KvGeometry{2, 1, 8}}) {
    for (auto [name, type] : {std::pair{"f16", KvType::kF16}, std::pair{"f32", KvType::kF32}}) {
      KvLayout layout;
      layout.n_layers = static_cast<std::uint32_t>(g.layers);
      layout.n_kv_heads = static_cast<std::uint32_t>(g.kv_heads);
      layout.head_dim = static_cast<std::uint32_t>(g.head_dim);
      layout.type = type;
      EXPECT_EQ(kv_bytes_per_token(g, kv_type_by_name(name)), layout.bytes_per_token()) << name;
      EXPECT_EQ(paged_allocation(1, layout.block_size, layout.bytes_per_token()).bytes_per_block,
                layout.bytes_per_block());
    }
  }
}

TEST(RuntimeAgreement, PagedBytesMatchWhatThePoolHolds) {
  KvLayout layout;
  layout.n_layers = 2;
  layout.n_kv_heads = 2;
  layout.head_dim = 8;
  layout.block_size = 16;
  layout.type = KvType::kF32;
  KvPool pool(layout, 16);
  const std::uint64_t per_token = kv_bytes_per_token(KvGeometry{2, 2, 8}, kv_type_by_name("f32"));
  for (std::uint64_t s : {1u, 15u, 16u, 17u, 100u}) {
    const SeqId seq = pool.create_sequence();
    pool.append(seq, s);
    EXPECT_EQ(pool.bytes_held(seq), paged_allocation(s, 16, per_token).bytes) << s << " tokens";
    pool.free_sequence(seq);
  }
}

}  // namespace
}  // namespace wisp::plan
