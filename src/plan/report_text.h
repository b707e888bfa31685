// The human-readable `wisp plan` report: every number with its unit, exact byte counts next to
// the scaled ones, and a line saying which units are 1024-based.
#pragma once

#include <string>

#include "plan/plan.h"

namespace wisp::plan {

std::string render_text(const PlanReport& report);

}  // namespace wisp::plan
