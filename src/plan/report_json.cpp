#include "plan/report_json.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace wisp::plan {
namespace {

using Json = nlohmann::ordered_json;

Json paged_json(const PagedAllocation& p) {
  return Json{{"tokens", p.tokens},
              {"block_size", p.block_size},
              {"blocks", p.blocks},
              {"slots", p.slots},
              {"bytes_per_block", p.bytes_per_block},
              {"allocated_bytes", p.bytes},
              {"used_bytes", p.used_bytes},
              {"waste_tokens", p.waste_tokens},
              {"waste_bytes", p.waste_bytes},
              {"tail_waste_fraction", p.tail_waste_fraction()}};
}

Json decode_json(const DecodeCeiling& d) {
  return Json{{"batch", d.batch},
              {"weight_bytes", d.weight_bytes},
              {"kv_bytes_per_stream", d.kv_bytes_per_stream},
              {"step_bytes", d.step_bytes},
              {"step_seconds", d.step_seconds},
              {"per_stream_tokens_per_second", d.per_stream_tokens_per_second},
              {"aggregate_tokens_per_second", d.aggregate_tokens_per_second}};
}

Json fit_json(const BatchFit& f) {
  return Json{{"kv_room_bytes", f.kv_room},
              {"per_request_bytes", f.per_request},
              {"users", f.users},
              {"used_bytes", f.used},
              {"leftover_bytes", f.leftover}};
}

}  // namespace

std::string render_json(const PlanReport& r) {
  const PlanInputs& in = r.in;
  Json j;
  Json model{{"source", in.model.source},        {"architecture", in.model.architecture},
             {"layers", in.model.kv.layers},     {"kv_heads", in.model.kv.kv_heads},
             {"head_dim", in.model.kv.head_dim}, {"kv_width", in.model.kv.kv_width()},
             {"weight_bytes", r.weight_bytes},   {"weights", r.weight_description}};
  model["decode_weight_bytes"] = r.decode_weight_bytes;  // one token's step; = weight_bytes when dense
  if (const auto& reads = in.model.reads; reads && reads->moe()) {
    model["experts"] = Json{{"count", reads->n_expert}, {"used", reads->n_expert_used}};
  }
  if (!r.decode_description.empty()) model["decode_reads"] = r.decode_description;
  if (r.decode_params > 0) model["decode_params"] = static_cast<std::uint64_t>(std::llround(r.decode_params));
  // A whole parameter count (from a file, or 13e9) prints as an integer, not 13000000000.0.
  const double p = in.model.params;
  if (!(p > 0)) {
    model["params"] = nullptr;
  } else if (p == std::floor(p) && p < 9007199254740992.0) {
    model["params"] = static_cast<std::uint64_t>(p);
  } else {
    model["params"] = p;
  }
  if (in.model.file_weight_bytes) model["file_weight_bytes"] = *in.model.file_weight_bytes;
  if (in.model.context_length) model["context_length"] = *in.model.context_length;
  if (in.model.sliding_window) {
    model["sliding_window"] = *in.model.sliding_window;
    model["sliding_window_layers_cached"] = "full length";  // as the runtime's pool allocates them
  }
  j["model"] = model;

  j["kv"] = Json{{"type", std::string(in.kv_type.name)},
                 {"group_values", in.kv_type.group_elems},
                 {"group_bytes", in.kv_type.group_bytes},
                 {"bytes_per_value", in.kv_type.bytes_per_element()},
                 {"ctx", in.ctx},
                 {"users", in.users},
                 {"bytes_per_token", r.kv_bytes_per_token},
                 {"bytes_per_request", r.kv_bytes_per_request},
                 {"paged_request", paged_json(r.request_paged)},
                 {"all_users_bytes", r.kv_bytes_all_users}};

  j["paged_vs_naive"] =
      Json{{"paged", paged_json(r.len_paged)},
           {"naive", Json{{"tokens", r.len_naive.tokens},
                          {"max_len", r.len_naive.max_len},
                          {"reserved_bytes", r.len_naive.bytes},
                          {"waste_tokens", r.len_naive.waste_tokens},
                          {"waste_bytes", r.len_naive.waste_bytes}}},
           {"waste_ratio", r.len_paged.waste_tokens > 0 ? Json(static_cast<double>(r.len_naive.waste_tokens) /
                                                               static_cast<double>(r.len_paged.waste_tokens))
                                                        : Json(nullptr)}};

  if (r.capacity) {
    Json c = fit_json(*r.capacity);
    c["budget_bytes"] = *in.budget;
    c["overhead_bytes"] = in.overhead;
    c["weight_bytes"] = r.weight_bytes;
    c["requested_users_fit"] = in.users <= r.capacity->users;
    j["capacity"] = c;
  }
  if (r.decode_at_users) {
    j["decode"] = Json{{"bandwidth_bytes_per_second", r.decode_at_users->bandwidth},
                       {"weights_only", decode_json(*r.decode_weights_only)},
                       {"at_users", decode_json(*r.decode_at_users)}};
  }
  if (r.prefill) {
    const PrefillCost& f = *r.prefill;
    Json p{{"tokens", f.tokens}, {"flops", f.flops}};
    if (f.flops_per_second > 0) {
      p["flops_per_second"] = f.flops_per_second;
      p["seconds"] = f.seconds;
      p["tokens_per_second"] = f.tokens_per_second;
    }
    j["prefill"] = p;
  }
  if (!r.ladder.empty()) {
    Json rows = Json::array();
    for (const LadderRow& row : r.ladder) {
      Json x{{"bits", row.bits}, {"weight_bytes", row.weight_bytes}};
      if (row.fit) {
        x["fits"] = true;
        x["kv_room_bytes"] = row.fit->kv_room;
        x["users"] = row.fit->users;
        x["leftover_bytes"] = row.fit->leftover;
      } else if (row.shortfall) {
        x["fits"] = false;
        x["shortfall_bytes"] = *row.shortfall;
        x["users"] = 0;
      }
      if (row.weights_only) {
        x["decode_one_stream_weights_only_tokens_per_second"] = row.weights_only->per_stream_tokens_per_second;
      }
      if (row.at_capacity) {
        x["decode_aggregate_at_users_tokens_per_second"] = row.at_capacity->aggregate_tokens_per_second;
      }
      rows.push_back(x);
    }
    j["ladder"] = rows;
  }
  j["notes"] = r.notes;
  return j.dump(2) + "\n";
}

}  // namespace wisp::plan
