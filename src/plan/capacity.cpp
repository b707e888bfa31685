#include "plan/capacity.h"

#include <string>

#include "plan/units.h"
#include "wisp/error.h"

namespace wisp::plan {

std::optional<std::uint64_t> kv_room_if_fits(std::uint64_t budget, std::uint64_t overhead, std::uint64_t weight_bytes) {
  if (overhead > budget || weight_bytes > budget - overhead) return std::nullopt;
  return budget - overhead - weight_bytes;
}

std::uint64_t kv_room(std::uint64_t budget, std::uint64_t overhead, std::uint64_t weight_bytes) {
  if (budget == 0) throw Error("memory budget must be positive");
  if (auto room = kv_room_if_fits(budget, overhead, weight_bytes)) return *room;
  const long double need = static_cast<long double>(overhead) + weight_bytes;
  throw Error("memory budget " + format_bytes(static_cast<double>(budget)) + " is smaller than the weights (" +
              format_bytes(static_cast<double>(weight_bytes)) + ") plus overhead (" +
              format_bytes(static_cast<double>(overhead)) + "): short by " +
              format_bytes(static_cast<double>(need - budget)) + ", no room for any KV cache");
}

BatchFit fit_batch(std::uint64_t room, std::uint64_t per_request) {
  if (per_request == 0) throw Error("KV bytes per request must be positive");
  BatchFit f;
  f.kv_room = room;
  f.per_request = per_request;
  f.users = room / per_request;
  f.used = f.users * per_request;
  f.leftover = room - f.used;
  return f;
}

}  // namespace wisp::plan
