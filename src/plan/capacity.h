// How many concurrent requests fit: what is left of the memory budget after the fixed costs
// (weights, reserved overhead) is the KV pool, and whole requests fill it — floor, never round,
// because a fraction of a request cannot be served (seed C2: ⌊40 / 3.125⌋ = 12, 2.5 GiB idle).
#pragma once

#include <cstdint>
#include <optional>

namespace wisp::plan {

// budget − overhead − weights, or nullopt when the fixed costs exceed the budget.
std::optional<std::uint64_t> kv_room_if_fits(std::uint64_t budget, std::uint64_t overhead, std::uint64_t weight_bytes);
// The same, but a budget smaller than weights + overhead is a wisp::Error that states all three
// sizes (in 1024-based units) and by how much it falls short.
std::uint64_t kv_room(std::uint64_t budget, std::uint64_t overhead, std::uint64_t weight_bytes);

struct BatchFit {
  std::uint64_t kv_room = 0;
  std::uint64_t per_request = 0;
  std::uint64_t users = 0;     // ⌊kv_room / per_request⌋
  std::uint64_t used = 0;      // users · per_request
  std::uint64_t leftover = 0;  // kv_room − used: idle, less than one more request
};

// Largest batch of `per_request`-byte requests in `kv_room` bytes. Throws when per_request is 0.
BatchFit fit_batch(std::uint64_t kv_room, std::uint64_t per_request);

}  // namespace wisp::plan
