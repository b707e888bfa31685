#include "model/kv_layout_for.h"

#include "model/model_state.h"

namespace wisp::model {

KvLayout kv_layout_for(const Model& m, std::uint32_t block_size, KvType type) {
  return kv_layout_for(detail::model_state(m).hp, block_size, type);
}

KvLayout kv_layout_for(const HParams& hp, std::uint32_t block_size, KvType type) {
  KvLayout l;
  l.n_layers = static_cast<std::uint32_t>(hp.n_layer);
  l.n_kv_heads = static_cast<std::uint32_t>(hp.n_head_kv);
  l.head_dim = static_cast<std::uint32_t>(hp.head_dim);
  l.block_size = block_size;
  l.type = type;
  return l;
}

}  // namespace wisp::model
