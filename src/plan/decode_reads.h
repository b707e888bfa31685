// The weight bytes one decode step reads, which for a mixture-of-experts model is far less than
// the file: every tensor is read whole (attention, norms, the router, shared experts, the output)
// except
//   - the merged expert tensors (blk.N.ffn_*_exps.*, experts outermost): a token reads the rows
//     of the expert_used_count experts its router picks, k/n of each;
//   - the token embedding when the output has its own matrix: one row per token (a tied
//     embedding is the output matrix too, read whole).
// A batch of B tokens in one step reads the union of their experts: under uniform routing each
// expert is missed by all B with probability (1 - k/n)^B, so the expected share read is
// 1 - (1 - k/n)^B (k/n exactly for one token). wisp's MoE layer (src/model/moe_ffn.cpp) reads
// only the chosen experts' rows, so these are the bytes its decode streams from memory.
#pragma once

#include <cstdint>

#include "formats/gguf_file.h"

namespace wisp::plan {

struct DecodeReads {
  // Outside the experts: read whole by every step (the untied embedding: one row).
  double dense_params = 0;
  std::uint64_t dense_bytes = 0;
  // The merged expert tensors of every layer, all experts (0 for a dense model).
  std::uint64_t n_expert = 0, n_expert_used = 0;
  double expert_params = 0;
  std::uint64_t expert_bytes = 0;
  // The token embedding rows a step does not read (untied output), for the report's wording.
  bool embedding_one_row = false;

  bool moe() const { return n_expert > 0; }
};

// The expected share of the expert rows a step of `batch` tokens reads: 1 - (1 - k/n)^batch;
// 1 for a dense model. Throws wisp::Error on a zero batch.
double expert_share_read(const DecodeReads& r, std::uint64_t batch);

// Bytes (as stored) and parameters a decode step of `batch` tokens reads. Batch 1 is exact
// (each expert tensor's bytes / n_expert * k); larger batches round the expected value.
std::uint64_t decode_bytes_read(const DecodeReads& r, std::uint64_t batch = 1);
double decode_params_read(const DecodeReads& r, std::uint64_t batch = 1);

// From a GGUF file's tensor table and <arch>.expert_count / expert_used_count. Throws
// wisp::Error naming the file and tensor or key when expert tensors and the counts disagree.
DecodeReads decode_reads_from_gguf(const GgufFile& file);

}  // namespace wisp::plan
