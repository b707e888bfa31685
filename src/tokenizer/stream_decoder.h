// Public: include/wisp/stream_decoder.h (kept here so wisp's own includes stay as they are).
#pragma once

#include "wisp/stream_decoder.h"
