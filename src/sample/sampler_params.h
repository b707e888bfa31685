// Public: include/wisp/sampler.h (SamplerParams lives there beside the Sampler).
#pragma once

#include "wisp/sampler.h"
