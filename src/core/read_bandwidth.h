// The machine's sustained memory read bandwidth, measured: decode on a CPU is bound by it, so
// `wisp bench` states decode as a fraction of it and `wisp plan --bandwidth measure` predicts
// the decode ceiling from it.
#pragma once

namespace wisp {

// Best of `runs` multi-threaded streaming reads over a 1 GiB buffer (far beyond the caches), in
// bytes per second. Takes a few seconds; allocates and touches the buffer first so page faults are
// not timed. Throws wisp::Error if the buffer cannot be allocated.
double measure_read_bandwidth(int threads, int runs = 5);

}  // namespace wisp
