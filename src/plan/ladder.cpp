#include "plan/ladder.h"

#include "plan/weights.h"

namespace wisp::plan {
namespace {

std::uint64_t step_bytes_at_bits(const LadderInputs& in, double bits, std::uint64_t all_bytes, std::uint64_t batch) {
  if (!in.reads) return all_bytes;
  return weight_bytes_at_bits(decode_params_read(*in.reads, batch), bits);
}

}  // namespace

std::vector<LadderRow> precision_ladder(const LadderInputs& in, std::span<const double> bits) {
  std::vector<LadderRow> rows;
  rows.reserve(bits.size());
  for (double b : bits) {
    LadderRow r;
    r.bits = b;
    r.weight_bytes = weight_bytes_at_bits(in.params, b);
    if (in.budget) {
      if (auto room = kv_room_if_fits(*in.budget, in.overhead, r.weight_bytes)) {
        r.fit = fit_batch(*room, in.kv_bytes_per_request);
      } else {
        r.shortfall = in.overhead + r.weight_bytes - *in.budget;
      }
    }
    if (in.bandwidth) {
      r.weights_only = decode_ceiling(*in.bandwidth, step_bytes_at_bits(in, b, r.weight_bytes, 1), 0, 1);
      if (r.fit && r.fit->users > 0) {
        r.at_capacity = decode_ceiling(*in.bandwidth, step_bytes_at_bits(in, b, r.weight_bytes, r.fit->users),
                                       in.kv_bytes_per_request, r.fit->users);
      }
    }
    rows.push_back(r);
  }
  return rows;
}

}  // namespace wisp::plan
