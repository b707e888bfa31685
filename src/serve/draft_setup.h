// The draft model of `wisp serve --draft FILE`: loaded once, its vocabulary checked against the
// target's, given its own engine and KV pool.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "tokenizer/tokenizer.h"
#include "wisp/engine.h"

namespace wisp::serve {

struct DraftSetup {
  std::shared_ptr<Engine> engine;
  std::string note;  // for the ready line: ", draft FILE (arch, weights; KV pool ...)"
};

// Loads `path` as a draft for a target whose tokenizer is `target` (wisp::Error naming the file
// when the vocabularies differ), on an engine with the target's options `eo` and a pool of
// `kv_tokens` tokens.
DraftSetup load_draft(const std::string& path, const Tokenizer& target, EngineOptions eo, std::size_t kv_tokens);

}  // namespace wisp::serve
