// The tokenizer's public declaration is include/wisp/tokenizer.h; this header adds the internal
// types its file and vocabulary constructors take, for wisp's own modules.
#pragma once

#include "formats/gguf_file.h"
#include "tokenizer/vocab.h"
#include "wisp/tokenizer.h"
