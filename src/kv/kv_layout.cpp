#include "kv/kv_layout.h"

#include <string>

#include "wisp/error.h"

namespace wisp {

void KvLayout::validate() const {
  auto need = [](std::uint32_t v, const char* name) {
    if (v == 0) throw Error(std::string("KV layout: ") + name + " must be at least 1 (got 0)");
  };
  need(n_layers, "n_layers");
  need(n_kv_heads, "n_kv_heads");
  need(head_dim, "head_dim");
  need(block_size, "block_size");
  kv_type_info(type);  // throws for a value outside the enum
}

}  // namespace wisp
