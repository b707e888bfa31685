// The machine's sustained memory read bandwidth, measured: decode on a CPU is bound by it, so
// `wisp bench` states decode as a fraction of it and `wisp plan --bandwidth measure` predicts
// the decode ceiling from it.
#pragma once

#include <cstddef>
#include <cstdint>

namespace wisp {

struct ReadBandwidth {
  // Best pass of the sum over threads of (its slice's bytes / the CPU time it spent reading them):
  // what the threads read while they run. Equal to the wall-clock rate on an idle machine, and not
  // lowered when other processes take the cores between or during the passes.
  double bytes_per_s = 0;
  // Best pass of all bytes / (last thread's end - first thread's start), wall clock.
  double wall_bytes_per_s = 0;
  std::size_t buffer_bytes = 0;
  int threads = 0;             // the readers: the threads asked for, at most the hardware threads
  std::uint64_t checksum = 0;  // XOR of what was read (returned so the reads are not optimised away)
};

// `threads` threads (at most the hardware threads: more would share a core and count its time
// twice), started once, each streaming through its own contiguous slice of a buffer of 4x the
// last-level cache (1 to 2 GiB) from four places of it at once (256 bytes from each in turn, the
// build's widest vector loads into independent accumulators); each thread touches its slice before the timed passes (no
// page faults timed), and every pass starts the threads together at a barrier. Best of `runs` passes. Takes a few
// seconds. Throws wisp::Error if the buffer cannot be allocated.
ReadBandwidth measure_read_bandwidth(int threads, int runs = 5);

}  // namespace wisp
