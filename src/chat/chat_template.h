// Public: include/wisp/chat_template.h.
#pragma once

#include "wisp/chat_template.h"
