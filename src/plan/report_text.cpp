#include "plan/report_text.h"

#include <cstdarg>
#include <cstdio>

namespace wisp::plan {
namespace {

// Accumulates report lines; printf-style because the report is columns of numbers.
class Lines {
 public:
  void add(const char* fmt, ...) __attribute__((format(printf, 2, 3))) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    out_ += buf;
    out_ += '\n';
  }
  void blank() { out_ += '\n'; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string tokens(std::uint64_t n) { return std::to_string(n) + (n == 1 ? " token" : " tokens"); }

std::string tok_per_s(double v) { return format_number(v, 3) + " tok/s"; }

}  // namespace

std::string render_text(const PlanReport& r) {
  const PlanInputs& in = r.in;
  const UnitSystem u = in.units;
  auto size = [u](std::uint64_t b) { return format_bytes(static_cast<double>(b), u); };
  auto sized = [u](double b) { return format_bytes(b, u); };
  auto exact = [&](std::uint64_t b) { return size(b) + " (" + format_thousands(b) + " bytes)"; };
  Lines L;

  L.add("wisp plan: %s%s", in.model.source.c_str(),
        in.model.architecture.empty() ? "" : (" (" + in.model.architecture + ")").c_str());
  L.add("units: %s; rates in kB/s..TB/s and FLOP/s are 1000-based",
        u == UnitSystem::kBinary ? "sizes in KiB/MiB/GiB are 1024-based"
                                 : "sizes in kB/MB/GB are 1000-based (--decimal)");
  L.blank();

  L.add("model");
  if (in.model.params > 0) {
    L.add("  parameters      %s (%s)", format_count(in.model.params).c_str(),
          format_thousands(static_cast<std::uint64_t>(in.model.params + 0.5)).c_str());
  } else {
    L.add("  parameters      not given");
  }
  L.add("  layers          %llu", static_cast<unsigned long long>(in.model.kv.layers));
  if (in.model.kv_width_from_d_model) {
    L.add("  K/V width       %llu values per layer per token (d_model: plain multi-head)",
          static_cast<unsigned long long>(in.model.kv.kv_width()));
  } else {
    L.add("  attention       %llu KV heads x %llu head size = %llu K/V values per layer per token",
          static_cast<unsigned long long>(in.model.kv.kv_heads), static_cast<unsigned long long>(in.model.kv.head_dim),
          static_cast<unsigned long long>(in.model.kv.kv_width()));
  }
  if (in.model.sliding_window) {
    L.add("  sliding window  %llu tokens on some layers; the KV cache keeps every layer at full length",
          static_cast<unsigned long long>(*in.model.sliding_window));
  }
  L.add("  weights         %s: %s", exact(r.weight_bytes).c_str(), r.weight_description.c_str());
  if (!r.decode_description.empty()) {
    std::string active;
    if (r.decode_params > 0) active = ", " + format_count(r.decode_params) + " active parameters";
    L.add("  read per token  %s: %s%s", exact(r.decode_weight_bytes).c_str(), r.decode_description.c_str(),
          active.c_str());
  }
  L.blank();

  L.add("KV cache, %s (%s)", std::string(in.kv_type.name).c_str(), std::string(in.kv_type.layout).c_str());
  L.add("  per token       %s bytes (%s)", format_thousands(r.kv_bytes_per_token).c_str(),
        size(r.kv_bytes_per_token).c_str());
  L.add("  per request     %s for %s", exact(r.kv_bytes_per_request).c_str(), tokens(in.ctx).c_str());
  L.add("  paged           %llu blocks of %llu tokens (%s each) = %s, %s empty",
        static_cast<unsigned long long>(r.request_paged.blocks), static_cast<unsigned long long>(in.block_size),
        size(r.request_paged.bytes_per_block).c_str(), size(r.request_paged.bytes).c_str(),
        tokens(r.request_paged.waste_tokens).c_str());
  L.add("  %-15s %s (paged)", (std::to_string(in.users) + (in.users == 1 ? " user" : " users")).c_str(),
        size(r.kv_bytes_all_users).c_str());
  L.blank();

  const PagedAllocation& p = r.len_paged;
  const NaiveReservation& n = r.len_naive;
  L.add("paged vs naive: one request of %s, max length %s, block size %llu", tokens(p.tokens).c_str(),
        tokens(n.max_len).c_str(), static_cast<unsigned long long>(p.block_size));
  L.add("  paged           %llu blocks = %llu slots, %s; tail waste %s = %s (%s%% of the last block)",
        static_cast<unsigned long long>(p.blocks), static_cast<unsigned long long>(p.slots), size(p.bytes).c_str(),
        tokens(p.waste_tokens).c_str(), size(p.waste_bytes).c_str(),
        format_number(100.0 * p.tail_waste_fraction()).c_str());
  L.add("  naive           %llu slots, %s; waste %s = %s", static_cast<unsigned long long>(n.max_len),
        size(n.bytes).c_str(), tokens(n.waste_tokens).c_str(), size(n.waste_bytes).c_str());
  if (p.waste_tokens > 0) {
    L.add("  naive wastes    %sx the paged tail",
          format_number(static_cast<double>(n.waste_tokens) / static_cast<double>(p.waste_tokens)).c_str());
  } else {
    L.add("  paged wastes    nothing: %s fill whole blocks", tokens(p.tokens).c_str());
  }
  L.blank();

  if (r.capacity) {
    const BatchFit& c = *r.capacity;
    L.add("capacity: %s budget - %s overhead - %s weights = %s for KV", size(*in.budget).c_str(),
          size(in.overhead).c_str(), size(r.weight_bytes).c_str(), size(c.kv_room).c_str());
    L.add("  users that fit  %llu at %s each (%s), %s left over", static_cast<unsigned long long>(c.users),
          size(c.per_request).c_str(), size(c.used).c_str(), size(c.leftover).c_str());
    L.blank();
  }

  if (r.decode_at_users) {
    const DecodeCeiling& w = *r.decode_weights_only;
    const DecodeCeiling& d = *r.decode_at_users;
    L.add("decode ceiling at %s (memory-bound: the weights a step reads, once per step + each stream's KV)",
          format_bandwidth(d.bandwidth).c_str());
    const std::string batch =
        std::to_string(d.batch) + (d.batch == 1 ? " stream, " : " streams, ") + tokens(in.ctx) + " each";
    L.add("  %-30s %s (%s read per step)", "1 stream, weights only", tok_per_s(w.per_stream_tokens_per_second).c_str(),
          sized(w.step_bytes).c_str());
    L.add("  %-30s %s per stream, %s aggregate (%s read per step)", batch.c_str(),
          tok_per_s(d.per_stream_tokens_per_second).c_str(), tok_per_s(d.aggregate_tokens_per_second).c_str(),
          sized(d.step_bytes).c_str());
    L.blank();
  }

  if (r.prefill) {
    const PrefillCost& f = *r.prefill;
    if (f.flops_per_second > 0) {
      L.add("prefill (2 FLOP per parameter per token) at %s", format_flops(f.flops_per_second).c_str());
      L.add("  %-15s %s, %s (%s)", tokens(f.tokens).c_str(), (format_number(f.flops / 1e12) + " TFLOP").c_str(),
            format_seconds(f.seconds).c_str(), tok_per_s(f.tokens_per_second).c_str());
    } else {
      L.add("prefill (2 FLOP per parameter per token; give --compute for a time)");
      L.add("  %-15s %s", tokens(f.tokens).c_str(), (format_number(f.flops / 1e12) + " TFLOP").c_str());
    }
    L.blank();
  }

  if (!r.ladder.empty()) {
    L.add("precision ladder (ideal bit-widths, no scale overhead; KV %s, %s per user)",
          std::string(in.kv_type.name).c_str(), tokens(in.ctx).c_str());
    L.add("  %-5s %-12s %-12s %-6s %-24s %s", "bits", "weights", "KV room", "users", "1 stream, weights only",
          "aggregate at those users");
    for (const LadderRow& row : r.ladder) {
      std::string room = "-", users = "-", one = "-", agg = "-";
      if (row.fit) {
        room = size(row.fit->kv_room);
        users = std::to_string(row.fit->users);
      } else if (row.shortfall) {
        room = "short " + size(*row.shortfall);
        users = "0";
      }
      if (row.weights_only) one = tok_per_s(row.weights_only->per_stream_tokens_per_second);
      if (row.at_capacity) agg = tok_per_s(row.at_capacity->aggregate_tokens_per_second);
      L.add("  %-5s %-12s %-12s %-6s %-24s %s", format_number(row.bits).c_str(), size(row.weight_bytes).c_str(),
            room.c_str(), users.c_str(), one.c_str(), agg.c_str());
    }
    L.blank();
  }

  for (const std::string& note : r.notes) L.add("note: %s", note.c_str());
  std::string out = L.take();
  while (out.size() >= 2 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n') {
    out.pop_back();
  }
  return out;
}

}  // namespace wisp::plan
