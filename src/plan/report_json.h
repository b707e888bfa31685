// `wisp plan --json`: the same answers for scripts. Sizes are exact integers in bytes (keys end in
// _bytes), rates in bytes/s, tokens/s and FLOP/s, so no unit convention needs guessing.
#pragma once

#include <string>

#include "plan/plan.h"

namespace wisp::plan {

// Pretty-printed JSON object, newline-terminated.
std::string render_json(const PlanReport& report);

}  // namespace wisp::plan
