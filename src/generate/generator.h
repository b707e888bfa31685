// Public: include/wisp/generate.h.
#pragma once

#include "wisp/generate.h"
