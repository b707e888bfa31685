// Public: include/wisp/conversation.h.
#pragma once

#include "wisp/conversation.h"
