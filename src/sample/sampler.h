// The sampler chain's public declaration is include/wisp/sampler.h; this header adds the internal
// candidate set its last_candidates() returns, for wisp's own modules.
#pragma once

#include "sample/candidates.h"
#include "wisp/sampler.h"
