// `wisp bench -m TARGET --lookup N | --draft FILE [--tasks FILE]`: speculative decoding against
// plain decoding on a task set (bench/spec_tasks.jsonl), one row per task.
#pragma once

#include <cstddef>
#include <string>

#include "command_line.h"
#include "speculation_flags.h"

namespace wisp::cli {

struct SpeculativeBenchFlags {
  SpeculationFlags speculation;
  std::string tasks = "bench/spec_tasks.jsonl";
  bool exact = false;  // bench's --exact
  bool json = false;   // bench's --json
};

// The flags bench adds for this mode (--tasks; add_speculation_flags declares the rest).
void add_speculative_bench_flags(CommandLine& cl, SpeculativeBenchFlags& f);
// Runs the comparison; `threads`, `n_gen` and `reps` are bench's -t, -n and -r.
int bench_speculative(const SpeculativeBenchFlags& f, const std::string& model, int threads, std::size_t n_gen,
                      int reps);

}  // namespace wisp::cli
