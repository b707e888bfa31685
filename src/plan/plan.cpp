#include "plan/plan.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "plan/kv_bytes.h"
#include "plan/weights.h"
#include "wisp/error.h"

namespace wisp::plan {
namespace {

void require_positive(std::uint64_t v, const char* what) {
  if (v == 0) throw Error(std::string(what) + " must be positive");
}

void resolve_weights(const PlanInputs& in, PlanReport& r) {
  const WeightChoice& w = in.weights;
  switch (w.source) {
    case WeightChoice::Source::kBytes:
      require_positive(w.bytes, "weight bytes");
      r.weight_bytes = w.bytes;
      r.weight_description = "as given";
      return;
    case WeightChoice::Source::kFile:
      if (!in.model.file_weight_bytes) throw Error("no model file to take weight bytes from");
      r.weight_bytes = *in.model.file_weight_bytes;
      r.weight_description = "the file's tensors as stored";
      return;
    case WeightChoice::Source::kBits:
      if (!(in.model.params > 0)) {
        throw Error(
            "weight bytes need a parameter count (give --params or -m FILE) or "
            "--weight-bytes");
      }
      r.weight_bytes = weight_bytes_at_bits(in.model.params, w.bits);
      r.weight_description =
          (w.type_name.empty() ? "" : w.type_name + ", ") + format_number(w.bits) + " bits per weight";
      return;
  }
}

// What a step of `batch` tokens reads of the chosen weights: the file's own bytes, or the
// parameters it reads at the chosen bits, or the given bytes scaled by that parameter share.
std::uint64_t step_weight_bytes(const PlanInputs& in, std::uint64_t weight_bytes, std::uint64_t batch) {
  const std::optional<DecodeReads>& reads = in.model.reads;
  if (!reads) return weight_bytes;
  switch (in.weights.source) {
    case WeightChoice::Source::kFile: return decode_bytes_read(*reads, batch);
    case WeightChoice::Source::kBits: return weight_bytes_at_bits(decode_params_read(*reads, batch), in.weights.bits);
    case WeightChoice::Source::kBytes: break;
  }
  const double share = in.model.params > 0 ? decode_params_read(*reads, batch) / in.model.params : 1.0;
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(weight_bytes) * std::min(1.0, share)));
}

std::string describe_reads(const DecodeReads& reads) {
  std::string d;
  if (reads.moe()) {
    d = "every tensor outside the experts (attention, router, norms, output) + " + std::to_string(reads.n_expert_used) +
        " of " + std::to_string(reads.n_expert) + " experts' rows";
  }
  if (reads.embedding_one_row)
    d += std::string(d.empty() ? "" : "; ") + "one token-embedding row (the output has its own matrix)";
  return d;
}

}  // namespace

PlanReport make_plan(const PlanInputs& in) {
  PlanReport r;
  r.in = in;
  validate(in.model.kv);
  require_positive(in.ctx, "context length");
  require_positive(in.users, "user count");
  require_positive(in.block_size, "block size");
  if (in.len) require_positive(*in.len, "length");
  if (in.prompt) require_positive(*in.prompt, "prompt length");
  resolve_weights(in, r);
  r.decode_weight_bytes = step_weight_bytes(in, r.weight_bytes, 1);
  r.decode_weight_bytes_at_users = step_weight_bytes(in, r.weight_bytes, in.users);
  if (in.model.reads) {
    r.decode_params = decode_params_read(*in.model.reads, 1);
    r.decode_description = describe_reads(*in.model.reads);
  } else {
    r.decode_params = in.model.params;
  }

  r.kv_bytes_per_token = kv_bytes_per_token(in.model.kv, in.kv_type);
  r.kv_bytes_per_request = kv_bytes(in.model.kv, in.kv_type, in.ctx);
  r.request_paged = paged_allocation(in.ctx, in.block_size, r.kv_bytes_per_token);
  r.kv_bytes_all_users = r.request_paged.bytes * in.users;
  if (r.kv_bytes_all_users / in.users != r.request_paged.bytes) {
    throw Error("KV bytes for all users overflow 64 bits");
  }

  const std::uint64_t len = in.len.value_or(in.ctx);
  if (len > in.ctx) {
    throw Error("length " + std::to_string(len) + " exceeds the context length " + std::to_string(in.ctx) +
                " (the naive allocator's max length)");
  }
  r.len_paged = paged_allocation(len, in.block_size, r.kv_bytes_per_token);
  r.len_naive = naive_reservation(len, in.ctx, r.kv_bytes_per_token);

  if (in.budget) {
    // Capacity counts what the paged pool holds per request (whole blocks), not the exact bytes.
    r.capacity = fit_batch(kv_room(*in.budget, in.overhead, r.weight_bytes), r.request_paged.bytes);
    if (r.capacity->users == 0) {
      r.notes.push_back("not even one request of " + std::to_string(in.ctx) + " tokens fits in the KV room");
    } else if (in.users > r.capacity->users) {
      r.notes.push_back(std::to_string(in.users) + " users do not fit: at most " + std::to_string(r.capacity->users) +
                        " at " + std::to_string(in.ctx) + " tokens each");
    }
  }

  if (in.bandwidth) {
    r.decode_weights_only = decode_ceiling(*in.bandwidth, r.decode_weight_bytes, 0, 1);
    // A stream's longest step reads its whole context: the ceiling at full length.
    r.decode_at_users = decode_ceiling(*in.bandwidth, r.decode_weight_bytes_at_users, r.kv_bytes_per_request, in.users);
  }

  if (in.model.params > 0) {
    if (in.compute && !(*in.compute > 0)) throw Error("compute rate must be positive");
    r.prefill = prefill_cost(in.model.params, in.prompt.value_or(in.ctx), in.compute.value_or(0));
    LadderInputs li;
    li.params = in.model.params;
    li.budget = in.budget;
    li.overhead = in.overhead;
    li.kv_bytes_per_request = r.request_paged.bytes;
    li.bandwidth = in.bandwidth;
    li.reads = in.model.reads;
    r.ladder = precision_ladder(li);
  } else if (in.compute) {
    throw Error("prefill cost needs a parameter count (give --params or -m FILE)");
  }
  return r;
}

}  // namespace wisp::plan
