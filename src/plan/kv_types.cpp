#include "plan/kv_types.h"

#include "wisp/error.h"

namespace wisp::plan {

KvElementType kv_plain_type(std::uint32_t bytes_per_value) {
  if (bytes_per_value == 0) throw Error("bytes per KV value must be positive");
  return {"plain", 1, bytes_per_value, "plain bytes per value, no scales"};
}

}  // namespace wisp::plan
