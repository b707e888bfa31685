// The description of one forward step: which sequences' tokens it evaluates and where.
//
// Rows of the step's activations are grouped in runs, one per sequence: run i holds rows
// [row0, row0 + n_tokens) at positions [pos0, pos0 + n_tokens) of sequence `seq`. Positions are
// also kept per row (RoPE reads them). Sequences and positions only: a backend finds the K/V
// blocks through the pool's block tables, on whatever device they live.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kv/block_allocator.h"

namespace wisp::model {

struct SeqRun {
  SeqId seq = 0;
  std::int64_t row0 = 0;
  std::int64_t n_tokens = 0;
  std::int64_t pos0 = 0;
};

class StepBatch {
 public:
  StepBatch() = default;
  // A batch of one run: n tokens of seq at positions [pos0, pos0 + n).
  StepBatch(SeqId seq, std::int64_t pos0, std::int64_t n) { add(seq, pos0, n); }

  void clear() {
    runs_.clear();
    positions_.clear();
  }
  // Appends a run of n tokens of seq at positions [pos0, pos0 + n); returns its first row.
  std::int64_t add(SeqId seq, std::int64_t pos0, std::int64_t n) {
    const std::int64_t row0 = n_tokens();
    runs_.push_back({seq, row0, n, pos0});
    for (std::int64_t t = 0; t < n; ++t) positions_.push_back(pos0 + t);
    return row0;
  }

  std::span<const SeqRun> runs() const { return runs_; }
  std::span<const std::int64_t> positions() const { return positions_; }
  std::int64_t n_tokens() const { return static_cast<std::int64_t>(positions_.size()); }

 private:
  std::vector<SeqRun> runs_;
  std::vector<std::int64_t> positions_;
};

}  // namespace wisp::model
