// One serving plan: every answer `wisp plan` gives, computed from a model shape and the user's
// knobs. The CLI parses flags into PlanInputs and prints a PlanReport (report_text.h,
// report_json.h); the arithmetic lives in the small files this composes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/capacity.h"
#include "plan/decode.h"
#include "plan/kv_types.h"
#include "plan/ladder.h"
#include "plan/model_shape.h"
#include "plan/paged.h"
#include "plan/prefill.h"
#include "plan/units.h"

namespace wisp::plan {

inline constexpr std::uint64_t kDefaultContext = 4096;

// Where the weight bytes come from, in order of precedence the CLI applies.
struct WeightChoice {
  enum class Source { kBits, kFile, kBytes };
  Source source = Source::kBits;
  double bits = 16;         // kBits: bits per weight (a type's, scales included)
  std::string type_name;    // kBits chosen by block type ("Q4_K"); empty for plain bits
  std::uint64_t bytes = 0;  // kBytes
};

struct PlanInputs {
  ModelShape model;
  WeightChoice weights;
  KvElementType kv_type = kv_type_by_name("f16");
  std::uint64_t ctx = kDefaultContext;           // tokens per request (S)
  std::uint64_t users = 1;                       // concurrent requests (B)
  std::uint64_t block_size = kDefaultBlockSize;  // paged KV block, tokens
  std::optional<std::uint64_t> len;              // a request's actual length; default ctx
  std::optional<std::uint64_t> prompt;           // prefill tokens; default ctx
  std::optional<std::uint64_t> budget;           // memory budget, bytes
  std::uint64_t overhead = 0;                    // reserved for activations etc., bytes
  std::optional<double> bandwidth;               // bytes/s
  std::optional<double> compute;                 // FLOP/s
  UnitSystem units = UnitSystem::kBinary;        // how sizes print
};

struct PlanReport {
  PlanInputs in;
  std::uint64_t weight_bytes = 0;
  std::string weight_description;  // "16 bits per weight", "Q4_K, 4.5 bits per weight", ...

  // The weight bytes one decode step reads (decode_reads.h): for one stream and for the batch of
  // `users` (a mixture of experts reads more experts for more tokens). Equal to weight_bytes when
  // a step reads every weight; decode_description then is empty.
  std::uint64_t decode_weight_bytes = 0;
  std::uint64_t decode_weight_bytes_at_users = 0;
  double decode_params = 0;        // parameters one step reads (0 without a count)
  std::string decode_description;  // "8 of 128 experts' rows, one embedding row", ...

  std::uint64_t kv_bytes_per_token = 0;
  std::uint64_t kv_bytes_per_request = 0;  // exact, ctx tokens
  PagedAllocation request_paged;           // ctx tokens in blocks: what the pool holds
  std::uint64_t kv_bytes_all_users = 0;    // users · request_paged.bytes

  PagedAllocation len_paged;   // the --len request, paged
  NaiveReservation len_naive;  // ... and reserved naively at max length ctx

  std::optional<BatchFit> capacity;                  // with a budget
  std::optional<DecodeCeiling> decode_weights_only;  // one stream, weights only
  std::optional<DecodeCeiling> decode_at_users;      // the batch of `users`, with their KV
  std::optional<PrefillCost> prefill;                // with a parameter count
  std::vector<LadderRow> ladder;                     // with a parameter count
  std::vector<std::string> notes;                    // warnings worth a line
};

// Throws wisp::Error for inputs that cannot describe a plan: zero sizes, a length beyond the
// context, weight bits without a parameter count, a budget smaller than weights + overhead.
PlanReport make_plan(const PlanInputs& in);

}  // namespace wisp::plan
