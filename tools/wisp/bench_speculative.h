// `wisp bench -m TARGET --lookup N | --draft FILE [--tasks FILE]`: speculative decoding against
// plain decoding on a task set (bench/spec_tasks.jsonl), one row per task.
#pragma once

#include "args.h"

namespace wisp::cli {

// The flags bench adds for this mode (besides add_speculation_flags).
void add_speculative_bench_flags(ArgParser& p);
// Runs the comparison; `threads`, `n_gen` and `reps` are bench's -t, -n and -r.
int bench_speculative(const Args& a, const std::string& model, int threads, std::size_t n_gen, int reps);

}  // namespace wisp::cli
