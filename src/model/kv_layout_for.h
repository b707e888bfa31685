// The KV pool layout a model's sessions use: one definition, so tests and tools that check the
// planner's byte predictions against the pool size the pool exactly as Session does.
#pragma once

#include <cstdint>

#include "kv/kv_layout.h"
#include "model/hparams.h"
#include "wisp/model.h"

namespace wisp::model {

// Every layer gets a full-length plane, sliding-window layers included (gemma3): the pool has one
// block table per sequence for all layers, so a windowed layer keeps positions it no longer reads.
// `wisp plan` prices the cache the same way.
KvLayout kv_layout_for(const Model& m, std::uint32_t block_size, KvType type);
// The same from the hyper-parameters (for ModelInfo, computed before the Model exists).
KvLayout kv_layout_for(const HParams& hp, std::uint32_t block_size, KvType type);

}  // namespace wisp::model
