// Public: include/wisp/chat_template_error.h.
#pragma once

#include "wisp/chat_template_error.h"
